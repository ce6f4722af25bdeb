// The public HTTP API, same origin, with the key kept in this tab's sessionStorage.
const KEY = "foldwise.apiKey";

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status; // 0 = the server could not be reached
    this.code = code;
    this.details = details;
  }
}

export const key = {
  get: () => sessionStorage.getItem(KEY) || "",
  set: (value) => sessionStorage.setItem(KEY, value),
  clear: () => sessionStorage.removeItem(KEY),
};

export async function api(path, { method = "GET", body, params } = {}) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, value);
  }
  const headers = { Accept: "application/json" };
  const secret = key.get();
  if (secret) headers.Authorization = `Bearer ${secret}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
  } catch (err) {
    throw new ApiError(0, "unreachable", `Cannot reach Foldwise at ${location.origin}.`);
  }
  if (response.status === 204) return null;
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(
      response.status,
      error.code || `http_${response.status}`,
      error.message || `HTTP ${response.status}`,
      error.details,
    );
  }
  return data;
}
