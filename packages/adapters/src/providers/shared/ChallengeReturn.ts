/**
 * The return URL a channel's provider sends the customer back to after 3-D Secure: Tender's return
 * route (ChannelProviders.returnUrlOf) plus our reference to the attempt. Both providers get the same
 * shape, so the route finds the transaction the same way whatever the provider appends (Stripe:
 * `payment_intent`, Adyen: `redirectResult`). The reference is no key: the route checks the
 * transaction belongs to the channel in the path and awaits a challenge, and the provider checks
 * what it appended.
 */

/** The query parameter carrying our transaction id on the return URL. */
export const REFERENCE_PARAM = "tender_reference"

/** The channel's return URL for one attempt. */
export const returnUrlFor = (channelReturnUrl: string, reference: string): string => {
  const url = new URL(channelReturnUrl)
  url.searchParams.set(REFERENCE_PARAM, reference)
  return url.toString()
}

/** The attempt a return is about, or null when the URL carries none. */
export const referenceOf = (returnedTo: URL): string | null => returnedTo.searchParams.get(REFERENCE_PARAM)
