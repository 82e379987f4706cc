/** The webhook signer: Tender's one signature scheme (Signature.ts), as the domain's port. */
import { PayloadSigner } from "@tender/domain"
import { Layer } from "effect"
import { signatureHeader } from "@tender/api/Signature"

export const layer = Layer.succeed(PayloadSigner, PayloadSigner.of({ sign: signatureHeader }))
