// The checkout page's script (served by server.ts as /checkout.js; plain JavaScript, no build).
// It never touches the card number: the card element is Tender's iframe, and this script only sees
// its events ({complete, error, fields} states) and the token collectCard returns.
"use strict"
;(() => {
  const publishableKey = document.querySelector('meta[name="tender-publishable-key"]').content
  const payButton = document.getElementById("pay")
  const outcome = document.getElementById("outcome")

  /** One line for the customer, and the same facts as data-* attributes for scripts and tests. */
  const show = (state, text, facts = {}) => {
    outcome.textContent = text
    outcome.dataset.state = state
    for (const key of ["status", "paymentId", "declineCode", "code"]) {
      if (facts[key] === undefined) delete outcome.dataset[key]
      else outcome.dataset[key] = facts[key]
    }
  }

  /** Our server creates the payment (its amount, its keys) and hands back only the client secret. */
  const newPayment = async () => {
    const answer = await fetch("/payments", { method: "POST" })
    if (!answer.ok) throw new Error("The shop could not start the payment.")
    return answer.json()
  }

  const tender = Tender(publishableKey)
  let payment
  let card
  let complete = false
  /** While collecting and paying, a change event (collectCard re-validates) must not re-enable Pay. */
  let busy = false
  /** Paid (or gone to the bank's check): this page's payment is over. */
  let finished = false
  const enablePay = () => {
    payButton.disabled = busy || finished || !complete
  }

  const start = async () => {
    try {
      payment = await newPayment()
    } catch (error) {
      return show("error", error.message)
    }
    card = tender.elements({ locale: navigator.language }).create("card", { clientSecret: payment.clientSecret })
    card.on("change", (event) => {
      complete = event.complete
      enablePay()
      if (event.error) show("invalid", event.error.message, { code: event.error.code })
      else if (outcome.dataset.state === "invalid") show("", "")
    })
    // Usually a Content-Security-Policy without Tender's fields host in frame-src (IFRAME_BLOCKED).
    card.on("loaderror", ({ error }) => show("error", `The card form did not load (${error.code}).`, { code: error.code }))
    card.mount("#card")
  }

  payButton.addEventListener("click", async () => {
    busy = true
    payButton.disabled = true
    show("working", "Paying…")
    try {
      await payOnce()
    } finally {
      busy = false
      enablePay()
    }
  })

  const payOnce = async () => {
    const { card: collected, error } = await tender.collectCard(payment.clientSecret)
    if (error) {
      // The fields keep what was typed; the customer corrects it and presses Pay again.
      return show("error", error.message, { code: error.code })
    }
    const paid = await tender.pay(payment.clientSecret, collected.token, { returnUrl: `${location.origin}/return` })
    const facts = { status: paid.status, paymentId: paid.paymentId, declineCode: paid.declineCode, code: paid.error?.code }
    finished = paid.status !== "failed"
    switch (paid.status) {
      case "succeeded":
        // A display hint: the order is fulfilled on the signed payment.succeeded webhook.
        return show("succeeded", "Thank you! Your payment went through.", facts)
      case "requires_action":
        // Redirect mode: the page is leaving for the bank's check and comes back to /return.
        return show("requires_action", "Taking you to your bank…", facts)
      default: {
        // A refused payment is final: a new attempt is a new payment, and the element takes its secret.
        show("failed", `The payment was declined${paid.declineCode ? ` (${paid.declineCode})` : ""}. Try another card.`, facts)
        try {
          payment = await newPayment()
          card.update({ clientSecret: payment.clientSecret })
          // A new secret keeps the fields' contents (the SDK never drops what was typed); after a decline
          // the customer tries another card, so the page empties them.
          card.clear()
        } catch (failure) {
          show("error", failure.message)
        }
      }
    }
  }

  void start()
})()
