/**
 * Where the hosted sandbox pages live, shared by the provider (which hands the URLs out) and the
 * HTTP routes (which serve them), so the two cannot drift apart.
 */
export const SANDBOX_PATHS = {
  redirect: "/sandbox/redirect",
  challenge: "/sandbox/3ds",
  voucher: "/sandbox/voucher",
  qr: "/sandbox/qr"
} as const

export interface SandboxUrls {
  readonly redirect: (reference: string) => string
  readonly challenge: (reference: string) => string
  readonly voucher: (reference: string) => string
  readonly qrImage: (reference: string) => string
}

export const sandboxUrls = (publicUrl: string): SandboxUrls => {
  const base = publicUrl.replace(/\/+$/, "")
  const at = (path: string, suffix = "") => (reference: string) => `${base}${path}/${encodeURIComponent(reference)}${suffix}`
  return {
    redirect: at(SANDBOX_PATHS.redirect),
    challenge: at(SANDBOX_PATHS.challenge),
    voucher: at(SANDBOX_PATHS.voucher),
    qrImage: at(SANDBOX_PATHS.qr, ".svg")
  }
}
