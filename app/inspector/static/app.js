// Foldwise Inspector: the router. It draws the sessions list or a session's view; no module
// imports it (a view asks for a new draw through shell.reroute).
import { renderSession } from "./session.js";
import { renderList } from "./home.js";
import { ROUTE_EVENT, renderError } from "./shell.js";

let generation = 0;

async function route() {
  const mine = ++generation;
  const path = location.hash.replace(/^#/, "") || "/";
  const match = path.match(/^\/sessions\/(.+)$/);
  const id = match ? decodeURIComponent(match[1]) : null;
  try {
    await (id === null ? renderList() : renderSession(id));
    if (mine === generation) document.title = id === null ? "Foldwise Inspector" : `${id} · Foldwise Inspector`;
  } catch (err) {
    if (mine === generation) renderError(err, route);
  }
}

window.addEventListener("hashchange", route);
window.addEventListener(ROUTE_EVENT, route);
route();
