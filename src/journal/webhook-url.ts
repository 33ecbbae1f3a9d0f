// The request-forgery checks of a webhook URL that need no network: scheme, user:password, allow-list (host and port),
// and a literal IP host's range. The gateway runs them when a config is created; push delivery runs them again before
// resolving the name.
import { type AllowHost, parseAllowHost } from "../config/index.ts";
import { addressKind, parseIp } from "./ip-address.ts";

export interface AddressPolicy {
  /**
   * Entries exempt from the https rule and the address checks (see parseAllowHost): `host` on the URL scheme's default
   * port only, `host:port` on that port, `host:*` on any; `*.suffix` for any name under suffix, with the same ports.
   */
  allowHosts: readonly string[];
}

/** `transient` marks a refusal that may pass later (the name did not resolve), so a delivery retries it. */
export type UrlRefusal = { ok: false; reason: string; transient?: true };

export type UrlForm = { ok: true; url: URL; host: string; allowListed: boolean } | UrlRefusal;

/** Parsed lists: a loaded config's list is one frozen array, read once. */
const parsedLists = new WeakMap<readonly string[], readonly AllowHost[]>();

/** The entries that parse; the config loader refused the others, so any left here (a test's list) match nothing. */
function allowList(allowHosts: readonly string[]): readonly AllowHost[] {
  const known = parsedLists.get(allowHosts);
  if (known !== undefined) return known;
  const parsed = allowHosts.flatMap((text) => {
    const read = parseAllowHost(text);
    return read.ok ? [read.entry] : [];
  });
  if (Object.isFrozen(allowHosts)) parsedLists.set(allowHosts, parsed);
  return parsed;
}

/** A URL's host as allow-list entries hold it: the parser's spelling, without IPv6 brackets or a trailing dot. */
function hostOf(url: URL): string {
  let host = url.hostname;
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

function portMatches(allowed: AllowHost["port"], url: URL): boolean {
  if (allowed === "any") return true;
  // The URL parser leaves the port empty when it is the scheme's default (http://h:80/ has port "").
  if (allowed === "default") return url.port === "";
  return (url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port)) === allowed;
}

/**
 * Whether the URL's host and port are on the allow-list: an entry without a port covers only the scheme's default
 * port, `host:port` that port, `host:*` every port; `*.example.com` covers any name under example.com.
 */
export function isAllowListed(url: URL, allowHosts: readonly string[]): boolean {
  const host = hostOf(url);
  return allowList(allowHosts).some(
    (entry) =>
      (entry.subdomains ? host.endsWith(`.${entry.host}`) : host === entry.host) && portMatches(entry.port, url),
  );
}

/**
 * The checks that need no network: the URL parses, is http(s), carries no user:password, and is https unless
 * allow-listed; a literal IP host (normalized by the URL parser: `http://2130706433` is 127.0.0.1) must be public.
 */
export function checkUrlForm(raw: string, policy: AddressPolicy): UrlForm {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "invalid url" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { ok: false, reason: `scheme ${url.protocol} not allowed` };
  }
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "credentials in url not allowed" };
  const host = hostOf(url);
  if (host === "") return { ok: false, reason: "missing host" };
  const allowListed = isAllowListed(url, policy.allowHosts);
  if (!allowListed) {
    const kind = parseIp(host) === undefined ? undefined : addressKind(host);
    if (kind !== undefined) return { ok: false, reason: `${kind} address ${host}` };
    if (url.protocol !== "https:") return { ok: false, reason: `scheme ${url.protocol} not allowed` };
  }
  return { ok: true, url, host, allowListed };
}
