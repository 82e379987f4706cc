/**
 * The hosted checkout's card glue: the few lines that run the browser SDK's card element on the
 * checkout page, so the page (like any merchant's) never holds a card number. Served by Tender as
 * an external script, so the page's Content-Security-Policy needs no inline script.
 *
 * It reads what the server rendered on the card form (`data-*`): the account's publishable key,
 * the page's language, the 3-D Secure display mode, and the client secret when the session's card
 * attempt already waits for the card. On submit:
 *   1. start the card attempt (POST `data-start`: the customer fields only, never card data) unless
 *      one already waits; the answer is its collect_card client secret, given to the element;
 *   2. `collectCard` (the fields frame tokenizes with Tender), then `pay`;
 *   3. go on (`data-next`): the server sends the browser where the session now stands (success_url,
 *      the form again with the decline, a pending challenge). A redirect-mode challenge leaves the
 *      page by itself and comes back to the checkout.
 * Plain ES2017, no build step: it is this string.
 */
export const CHECKOUT_SCRIPT_PATH = "/hosted/v1/checkout.js"

export const CHECKOUT_SCRIPT = `(function () {
  "use strict";
  var form = document.querySelector("form[data-tender-card]");
  if (form === null || typeof window.Tender !== "function") return;
  var d = form.dataset;
  var errorBox = form.querySelector("[data-card-error]");
  var button = form.querySelector("button[type=submit]");
  var secret = d.clientSecret || null;
  var complete = false;
  var busy = false;

  var show = function (text) { errorBox.textContent = text; errorBox.hidden = false; };
  var hide = function () { errorBox.textContent = ""; errorBox.hidden = true; };
  var idle = function () { busy = false; button.disabled = false; };
  var go = function (url) { window.location.assign(url); };

  var tender = window.Tender(d.publishableKey);
  var card = tender.elements({ locale: d.locale }).create("card", secret === null ? {} : { clientSecret: secret });
  card.on("change", function (event) {
    complete = event.complete === true;
    if (complete) hide();
  });
  card.on("loaderror", function () { show(d.msgError); });
  card.mount(form.querySelector("[data-card-element]"));

  var mark = function (problems) {
    Object.keys(problems).forEach(function (name) {
      var input = form.elements.namedItem(name);
      if (input !== null && typeof input.setAttribute === "function") input.setAttribute("aria-invalid", "true");
    });
  };

  /** The collect_card secret of the session's card attempt: started now, or the one waiting. */
  var start = function () {
    if (secret !== null) return Promise.resolve(secret);
    return fetch(d.start, {
      method: "POST",
      credentials: "same-origin",
      headers: { accept: "application/json" },
      body: new URLSearchParams(new FormData(form))
    }).then(function (reply) { return reply.json(); }).then(function (answer) {
      if (typeof answer.client_secret === "string") {
        secret = answer.client_secret;
        card.update({ clientSecret: secret });
        return secret;
      }
      if (typeof answer.location === "string") {
        go(answer.location);
        return null;
      }
      mark(answer.problems || {});
      show(answer.message || d.msgError);
      idle();
      return null;
    });
  };

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (busy) return;
    if (!complete) {
      show(d.msgIncomplete);
      card.focus();
      return;
    }
    busy = true;
    button.disabled = true;
    hide();
    start().then(function (s) {
      if (s === null) return undefined;
      return tender.collectCard(s).then(function (collected) {
        if (collected.error) {
          // The attempt's 15 minutes ran out: the page shows where the session stands now.
          if (collected.error.code === "CLIENT_SECRET_EXPIRED") return go(d.next);
          show(collected.error.type === "validation_error" ? d.msgInvalid : d.msgError);
          return idle();
        }
        return tender.pay(s, collected.card.token, { returnUrl: d.returnUrl }).then(function (paid) {
          if (paid.status === "requires_action" && !paid.error && d.displayMode === "redirect") return;
          go(d.next);
        });
      });
    }).catch(function () {
      show(d.msgError);
      idle();
    });
  });
})();
`
