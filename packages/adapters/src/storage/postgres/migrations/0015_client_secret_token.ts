/**
 * A client secret keeps the token its `card_tokens` call minted (the only one its `pay` accepts) and
 * how many such calls it made (capped, so one secret is no card-checking oracle).
 */
export const statements = [
  `ALTER TABLE client_secrets ADD COLUMN card_token text`,
  `ALTER TABLE client_secrets ADD COLUMN token_mints integer NOT NULL DEFAULT 0`
]
