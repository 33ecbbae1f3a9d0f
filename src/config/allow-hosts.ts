// The form of a push.allowHosts entry: `host`, `host:port`, `host:*`, and `*.suffix` with the same port forms; an IPv6
// address goes in brackets (`[::1]:8080`). Pure: the loader rejects what does not parse, the webhook URL check matches
// URLs against what does.

/** One parsed entry. */
export interface AllowHost {
  /** The host as the URL parser writes it (lower case, IPv4 normalized, IPv6 without brackets), no trailing dot. */
  host: string;
  /** `*.suffix`: any name under `host`, not `host` itself. */
  subdomains: boolean;
  /** The port exempted: a number; `default`, the URL scheme's own (80 for http, 443 for https); or `any` (`:*`). */
  port: number | "default" | "any";
}

export type AllowHostParse = { ok: true; entry: AllowHost } | { ok: false; problem: string };

const FORMS = "must be host, host:port, host:* or *.suffix with the same port forms, an IPv6 address in brackets";
/** Characters that cannot be part of a host name, though the URL parser would read past them or percent-decode. */
const NOT_IN_HOST = /[\s/\\?#@%*[\]:]/;

function refuse(problem: string): AllowHostParse {
  return { ok: false, problem };
}

function parsePort(text: string | undefined): number | "default" | "any" | undefined {
  if (text === undefined) return "default";
  if (text === "*") return "any";
  if (!/^\d{1,5}$/.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** The host as a URL holding it would carry it, or undefined when no URL can. */
function urlHost(text: string): string | undefined {
  let host: string;
  try {
    host = new URL(`http://${text}/`).hostname;
  } catch {
    return undefined;
  }
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  return host.endsWith(".") ? host.slice(0, -1) : host;
}

/** Reads one entry; the problem names what is wrong with it (without repeating the entry). */
export function parseAllowHost(text: string): AllowHostParse {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === "") return refuse("must not be empty");
  const subdomains = trimmed.startsWith("*.");
  const rest = subdomains ? trimmed.slice(2) : trimmed;
  let hostText: string;
  let portText: string | undefined;
  let ipv6 = false;
  if (rest.startsWith("[")) {
    const close = rest.indexOf("]");
    if (close < 0) return refuse(`${FORMS}: [ without ]`);
    hostText = rest.slice(0, close + 1);
    const tail = rest.slice(close + 1);
    if (tail !== "" && !tail.startsWith(":")) return refuse(`${FORMS}: unexpected text after ]`);
    portText = tail === "" ? undefined : tail.slice(1);
    ipv6 = true;
  } else {
    const parts = rest.split(":");
    if (parts.length > 2) return refuse(`${FORMS}: write an IPv6 address in brackets, e.g. [::1] or [::1]:8080`);
    [hostText = "", portText] = parts;
    if (hostText === "" || NOT_IN_HOST.test(hostText)) return refuse(`${FORMS}: not a host name`);
  }
  const port = parsePort(portText);
  if (port === undefined) return refuse(`${FORMS}: the port must be 1 to 65535, or * for any port`);
  const host = urlHost(hostText);
  if (host === undefined || host === "" || (ipv6 && !host.includes(":"))) return refuse(`${FORMS}: not a host name`);
  if (subdomains && (ipv6 || /^[\d.]+$/.test(host))) return refuse("*. must be followed by a domain name");
  return { ok: true, entry: { host, subdomains, port } };
}
