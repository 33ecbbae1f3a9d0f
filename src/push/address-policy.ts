// The request-forgery policy for webhook URLs: scheme, credentials, allow-list, and every resolved address.
// Refusals carry a short stable reason for the delivery record. Only checkWebhookUrl resolves names; nothing connects.
// The checks without network (checkUrlForm) live in the journal, so that the gateway judges a URL by the same rules.
import {
  type AddressPolicy,
  addressKind,
  checkUrlForm,
  isAllowListed,
  parseIp,
  type UrlRefusal,
} from "../journal/index.ts";
import { type Resolver, systemResolver } from "./resolver.ts";

export type { AddressPolicy, UrlForm, UrlRefusal } from "../journal/index.ts";
export { checkUrlForm, isAllowListed };

export type UrlCheck = { ok: true; url: URL; address: string; family: 4 | 6 } | UrlRefusal;

function errorCode(error: unknown): string {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") {
    return error.code;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * The whole policy: `checkUrlForm`, then the host is resolved and EVERY address must be public (unless the host is
 * allow-listed). On success, `address` is the one to connect to: the caller must not resolve the name again.
 */
export async function checkWebhookUrl(
  raw: string,
  policy: AddressPolicy,
  resolve: Resolver = systemResolver,
): Promise<UrlCheck> {
  const form = checkUrlForm(raw, policy);
  if (!form.ok) return form;
  const literal = parseIp(form.host);
  if (literal !== undefined) return { ok: true, url: form.url, address: form.host, family: literal.family };
  let found: readonly { address: string }[];
  try {
    found = await resolve(form.host);
  } catch (error) {
    return { ok: false, reason: `dns lookup failed for ${form.host}: ${errorCode(error)}`, transient: true };
  }
  let chosen: { address: string; family: 4 | 6 } | undefined;
  for (const { address } of found) {
    const parsed = parseIp(address);
    if (parsed === undefined) return { ok: false, reason: `invalid address ${address}` };
    const kind = form.allowListed ? undefined : addressKind(address);
    if (kind !== undefined) return { ok: false, reason: `${kind} address ${address}` };
    chosen ??= { address, family: parsed.family };
  }
  if (chosen === undefined) return { ok: false, reason: `no address for ${form.host}`, transient: true };
  return { ok: true, url: form.url, ...chosen };
}
