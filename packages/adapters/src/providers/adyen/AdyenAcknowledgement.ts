/**
 * What Adyen expects back once a notification delivery is accepted (otherwise it retries). A module
 * of its own, so that the HTTP route answering Adyen does not import the Adyen library with it.
 */
export const ACCEPTED = "[accepted]"
