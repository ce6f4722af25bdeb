// The page around the views: the key prompt, errors, who is signed in, the confirmation
// dialog. A view that needs the current route drawn again calls reroute(); app.js listens.
import { ApiError, key } from "./api.js";
import { h, notice, show } from "./dom.js";

export const ROUTE_EVENT = "foldwise:route";
export const reroute = () => window.dispatchEvent(new Event(ROUTE_EVENT));

const who = document.getElementById("who");
const dialog = document.getElementById("confirm");

function renderKeyPrompt(message) {
  const input = h("input", {
    id: "api-key",
    type: "password",
    autocomplete: "off",
    required: true,
    "aria-describedby": "key-help",
  });
  const form = h(
    "form",
    {
      class: "key-form",
      "aria-labelledby": "key-title",
      onsubmit: (event) => {
        event.preventDefault();
        key.set(input.value.trim());
        reroute();
      },
    },
    h("h2", { id: "key-title", text: "API key needed" }),
    h("p", { id: "key-help", text: message }),
    h("label", { for: "api-key", text: "API key" }),
    h("div", { class: "row" }, input, h("button", { type: "submit", class: "primary", text: "Use key" })),
    h("p", {
      class: "muted",
      text: "The key stays in this browser tab (sessionStorage) and is sent as a Bearer header.",
    }),
  );
  show(form);
  input.focus();
}

export function renderError(err, retry = reroute) {
  if (!(err instanceof ApiError)) {
    console.error(err);
    show(notice("error", "Something went wrong", String(err), retryButton(retry)));
    return;
  }
  if (err.status === 401) {
    const had = key.get();
    key.clear();
    updateWho();
    renderKeyPrompt(
      had
        ? "That key was not accepted. Enter a valid Foldwise API key."
        : "This Foldwise requires an API key. Enter one to see your tenant's sessions.",
    );
    return;
  }
  if (err.status === 404) {
    show(
      notice(
        "error",
        "Not found",
        `${err.message}. It does not exist, or it belongs to another tenant.`,
        h("a", { href: "#/", class: "button", text: "All sessions" }),
      ),
    );
    return;
  }
  if (err.status === 0) {
    show(notice("error", "Server unreachable", `${err.message} Is it running?`, retryButton(retry)));
    return;
  }
  show(notice("error", `Error ${err.status}: ${err.code}`, err.message, retryButton(retry)));
}

function retryButton(retry) {
  return h("button", { type: "button", text: "Retry", onclick: () => retry() });
}

export function updateWho() {
  who.replaceChildren();
  if (key.get()) {
    who.append(
      h("span", { class: "muted", text: "key set" }),
      h("button", {
        type: "button",
        class: "small",
        text: "Forget key",
        onclick: () => {
          key.clear();
          updateWho();
          reroute();
        },
      }),
    );
  }
}

export function confirmAction({ title, text, okLabel, extra }) {
  return new Promise((resolve) => {
    document.getElementById("confirm-title").textContent = title;
    document.getElementById("confirm-text").textContent = text;
    const slot = document.getElementById("confirm-extra");
    slot.replaceChildren(...(extra ? [extra] : []));
    document.getElementById("confirm-ok").textContent = okLabel;
    const done = (ok) => {
      dialog.removeEventListener("close", onClose);
      resolve(ok);
    };
    const onClose = () => done(dialog.returnValue === "ok");
    dialog.addEventListener("close", onClose);
    document.getElementById("confirm-cancel").onclick = () => dialog.close("cancel");
    dialog.returnValue = "cancel";
    dialog.showModal();
  });
}
