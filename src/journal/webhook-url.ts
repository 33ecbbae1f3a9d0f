// The request-forgery checks of a webhook URL that need no network: scheme, user:password, allow-list, and a literal IP
// host's range. The gateway runs them when a config is created; push delivery runs them again before resolving the name.
import { addressKind, parseIp } from "./ip-address.ts";

export interface AddressPolicy {
  /** Host names (exact, or `*.suffix` for any subdomain) exempt from the https rule and the address checks. */
  allowHosts: readonly string[];
}

/** `transient` marks a refusal that may pass later (the name did not resolve), so a delivery retries it. */
export type UrlRefusal = { ok: false; reason: string; transient?: true };

export type UrlForm = { ok: true; url: URL; host: string; allowListed: boolean } | UrlRefusal;

/** A host as the URL parser writes it, lower case, without IPv6 brackets or a trailing dot. */
function canonicalHost(text: string): string {
  const trimmed = text.trim().toLowerCase();
  const bracketed = trimmed.includes(":") && !trimmed.startsWith("[") ? `[${trimmed}]` : trimmed;
  let host = trimmed;
  try {
    host = new URL(`http://${bracketed}/`).hostname;
  } catch {
    // Not a valid host: compare it as written, it then matches nothing a URL can hold.
  }
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

/** Whether `hostname` is on the allow-list: an exact entry, or `*.example.com` for any name under example.com. */
export function isAllowListed(hostname: string, allowHosts: readonly string[]): boolean {
  const host = canonicalHost(hostname);
  return allowHosts.some((entry) => {
    const trimmed = entry.trim();
    if (trimmed.startsWith("*.")) {
      const suffix = canonicalHost(trimmed.slice(2));
      return suffix !== "" && host.endsWith(`.${suffix}`);
    }
    return trimmed !== "" && canonicalHost(trimmed) === host;
  });
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
  const host = canonicalHost(url.hostname);
  if (host === "") return { ok: false, reason: "missing host" };
  const allowListed = isAllowListed(host, policy.allowHosts);
  if (!allowListed) {
    const kind = parseIp(host) === undefined ? undefined : addressKind(host);
    if (kind !== undefined) return { ok: false, reason: `${kind} address ${host}` };
    if (url.protocol !== "https:") return { ok: false, reason: `scheme ${url.protocol} not allowed` };
  }
  return { ok: true, url, host, allowListed };
}
