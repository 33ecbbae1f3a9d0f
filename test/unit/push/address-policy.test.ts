// Unit tests of the request-forgery policy with an injected resolver: no DNS query and no packet leaves the process.
import { describe, expect, test } from "bun:test";
import { type AddressPolicy, checkUrlForm, checkWebhookUrl, isAllowListed } from "../../../src/push/address-policy.ts";
import type { ResolvedAddress, Resolver } from "../../../src/push/resolver.ts";

/** A resolver over a fixed table that records every name it was asked for. */
function fakeResolver(table: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`no such host ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(resolve, { asked });
}

const none: AddressPolicy = { allowHosts: [] };
const dns = fakeResolver({
  "hooks.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "internal.example.com": ["10.0.0.7"],
  "mixed.example.com": ["93.184.216.34", "192.168.1.10"],
  "metadata.example.com": ["169.254.169.254"],
  "mapped.example.com": ["::ffff:127.0.0.1"],
  "empty.example.com": [],
  localhost: ["127.0.0.1", "::1"],
  "hook.test": ["127.0.0.1"],
  "a.hooks.test": ["10.1.1.1"],
});

async function reason(url: string, policy: AddressPolicy = none): Promise<string> {
  const check = await checkWebhookUrl(url, policy, dns);
  if (check.ok) throw new Error(`expected ${url} to be refused, got ${check.address}`);
  return check.reason;
}

describe("the cases from the issue", () => {
  test("literal loopback, link-local, metadata and private hosts are refused with their kind", async () => {
    expect(await reason("http://127.0.0.1")).toBe("loopback address 127.0.0.1");
    expect(await reason("https://127.0.0.1/hook")).toBe("loopback address 127.0.0.1");
    expect(await reason("http://[::1]")).toBe("loopback address ::1");
    expect(await reason("http://169.254.169.254/latest/meta-data")).toBe("metadata address 169.254.169.254");
    expect(await reason("http://10.0.0.1")).toBe("private address 10.0.0.1");
    expect(await reason("http://[::ffff:127.0.0.1]")).toBe("ipv4-mapped loopback address ::ffff:7f00:1");
  });

  test("a host name resolving to a private address is refused", async () => {
    expect(await reason("https://internal.example.com/hook")).toBe("private address 10.0.0.7");
    expect(await reason("https://metadata.example.com/")).toBe("metadata address 169.254.169.254");
    expect(await reason("https://mapped.example.com/")).toBe("ipv4-mapped loopback address ::ffff:127.0.0.1");
  });

  test("one public and one private address: refused, because every address is checked", async () => {
    expect(await reason("https://mixed.example.com/hook")).toBe("private address 192.168.1.10");
  });

  test("an allow-listed loopback host is allowed, over http too, and connects to the resolved address", async () => {
    const check = await checkWebhookUrl("http://localhost:8080/hook", { allowHosts: ["localhost:8080"] }, dns);
    expect(check).toMatchObject({ ok: true, address: "127.0.0.1", family: 4 });
    const literal = await checkWebhookUrl("http://127.0.0.1:9/x", { allowHosts: ["127.0.0.1:9"] }, dns);
    expect(literal).toMatchObject({ ok: true, address: "127.0.0.1", family: 4 });
  });
});

describe("literal hosts in other spellings are normalized, then judged", () => {
  for (const url of [
    "http://2130706433/",
    "http://0x7f.1/",
    "http://127.1/",
    "http://0177.0.0.1/",
    "http://127.0.0.1./",
  ]) {
    test(url, async () => {
      expect(await reason(url)).toBe("loopback address 127.0.0.1");
    });
  }
  test("http://0/ is the unspecified address", async () => {
    expect(await reason("http://0/")).toBe("unspecified address 0.0.0.0");
  });
  test("IPv4-compatible and NAT64 literals", async () => {
    expect(await reason("https://[::127.0.0.1]/")).toBe("ipv4-compatible address ::7f00:1");
    expect(await reason("https://[64:ff9b::a9fe:a9fe]/")).toBe("nat64 metadata address 64:ff9b::a9fe:a9fe");
  });
  test("no literal host is ever looked up", async () => {
    const before = dns.asked.length;
    await reason("https://[fe80::1]/");
    await reason("https://100.64.1.1/");
    expect(dns.asked.length).toBe(before);
  });
});

describe("form rules", () => {
  test("http is refused for a public host, without a DNS query", async () => {
    const before = dns.asked.length;
    expect(await reason("http://hooks.example.com/hook")).toBe("scheme http: not allowed");
    expect(dns.asked.length).toBe(before);
  });
  test("other schemes are refused even when allow-listed", async () => {
    const policy = { allowHosts: ["hook.test"] };
    expect(await reason("ftp://hook.test/x", policy)).toBe("scheme ftp: not allowed");
    expect(await reason("file:///etc/passwd", policy)).toBe("scheme file: not allowed");
  });
  test("user:password in the URL is refused", async () => {
    expect(await reason("https://user:pw@hooks.example.com/")).toBe("credentials in url not allowed");
    expect(await reason("https://user@hooks.example.com/")).toBe("credentials in url not allowed");
  });
  test("what does not parse is refused", async () => {
    expect(await reason("not a url")).toBe("invalid url");
    expect(await reason("https://999.1.1.1/")).toBe("invalid url");
  });
  test("checkUrlForm makes no DNS query and says whether the host is allow-listed", () => {
    expect(checkUrlForm("https://hooks.example.com/x", none)).toMatchObject({ ok: true, allowListed: false });
    expect(checkUrlForm("http://hook.test/x", { allowHosts: ["hook.test"] })).toMatchObject({
      ok: true,
      host: "hook.test",
      allowListed: true,
    });
    expect(checkUrlForm("http://10.0.0.1/", none)).toEqual({ ok: false, reason: "private address 10.0.0.1" });
  });
});

describe("resolution", () => {
  test("a public host passes and the first address is the one to connect to", async () => {
    const check = await checkWebhookUrl("https://hooks.example.com/hook?x=1", none, dns);
    expect(check).toMatchObject({ ok: true, address: "93.184.216.34", family: 4 });
    if (check.ok) expect(check.url.href).toBe("https://hooks.example.com/hook?x=1");
  });
  test("a name that does not resolve, or resolves to nothing, is a transient refusal", async () => {
    expect(await checkWebhookUrl("https://nowhere.example.com/", none, dns)).toEqual({
      ok: false,
      reason: "dns lookup failed for nowhere.example.com: ENOTFOUND",
      transient: true,
    });
    expect(await checkWebhookUrl("https://empty.example.com/", none, dns)).toEqual({
      ok: false,
      reason: "no address for empty.example.com",
      transient: true,
    });
  });
  test("an allow-list entry for one host does not cover another that resolves to the same place", async () => {
    expect(await reason("https://localhost/", { allowHosts: ["hook.test"] })).toBe("loopback address 127.0.0.1");
  });
});

describe("isAllowListed", () => {
  const listed = (url: string, allowHosts: string[]) => isAllowListed(new URL(url), allowHosts);
  test("exact names, case and trailing dot aside", () => {
    expect(listed("https://Hook.Test/", ["hook.test"])).toBe(true);
    expect(listed("https://hook.test./", ["HOOK.test"])).toBe(true);
    expect(listed("https://hook.test.evil.com/", ["hook.test"])).toBe(false);
    expect(listed("https://xhook.test/", ["hook.test"])).toBe(false);
  });
  test("*.suffix covers subdomains only", () => {
    expect(listed("https://a.hooks.test/", ["*.hooks.test"])).toBe(true);
    expect(listed("https://b.a.hooks.test/", ["*.hooks.test"])).toBe(true);
    expect(listed("https://hooks.test/", ["*.hooks.test"])).toBe(false);
    expect(listed("https://evilhooks.test/", ["*.hooks.test"])).toBe(false);
  });
  test("IP entries match the URL parser's spelling of the host; IPv6 in brackets", () => {
    expect(listed("http://[::1]/", ["[::1]"])).toBe(true);
    expect(listed("http://[::1]/", ["[0:0:0:0:0:0:0:1]"])).toBe(true);
    expect(listed("http://127.0.0.1/", ["127.0.0.1"])).toBe(true);
    expect(listed("http://127.0.0.1/", ["127.1"])).toBe(true);
    expect(listed("http://127.0.0.2/", ["127.0.0.1"])).toBe(false);
  });
  test("an entry without a port covers only the scheme's default port", () => {
    expect(listed("http://hook.test/", ["hook.test"])).toBe(true);
    expect(listed("http://hook.test:80/", ["hook.test"])).toBe(true);
    expect(listed("https://hook.test:443/", ["hook.test"])).toBe(true);
    expect(listed("http://hook.test:8080/", ["hook.test"])).toBe(false);
    expect(listed("http://hook.test:443/", ["hook.test"])).toBe(false);
    expect(listed("https://hook.test:80/", ["hook.test"])).toBe(false);
    expect(listed("http://127.0.0.1:6379/", ["127.0.0.1"])).toBe(false);
    expect(listed("http://a.hooks.test:6379/", ["*.hooks.test"])).toBe(false);
  });
  test("host:port covers that port only, whatever the scheme; host:* covers every port", () => {
    expect(listed("http://127.0.0.1:8080/", ["127.0.0.1:8080"])).toBe(true);
    expect(listed("https://127.0.0.1:8080/", ["127.0.0.1:8080"])).toBe(true);
    expect(listed("http://127.0.0.1:6379/", ["127.0.0.1:8080"])).toBe(false);
    expect(listed("http://127.0.0.1/", ["127.0.0.1:8080"])).toBe(false);
    expect(listed("http://hook.test/", ["hook.test:80"])).toBe(true);
    expect(listed("https://hook.test/", ["hook.test:80"])).toBe(false);
    expect(listed("http://[::1]:9000/", ["[::1]:9000"])).toBe(true);
    expect(listed("http://[::1]:9001/", ["[::1]:9000"])).toBe(false);
    expect(listed("http://a.hooks.test:9000/", ["*.hooks.test:9000"])).toBe(true);
    expect(listed("http://a.hooks.test:9001/", ["*.hooks.test:9000"])).toBe(false);
    expect(listed("http://hook.test:6379/", ["hook.test:*"])).toBe(true);
    expect(listed("http://a.hooks.test:1/", ["*.hooks.test:*"])).toBe(true);
  });
  test("entries that do not parse allow nothing", () => {
    expect(listed("https://hook.test/", ["", " "])).toBe(false);
    expect(listed("https://hook.test/", ["*."])).toBe(false);
    expect(listed("http://[::1]/", ["::1"])).toBe(false);
    expect(listed("http://hook.test:0/", ["hook.test:0"])).toBe(false);
  });
  test("an allow-listed wildcard host resolving to a private address is allowed", async () => {
    const check = await checkWebhookUrl("http://a.hooks.test/", { allowHosts: ["*.hooks.test"] }, dns);
    expect(check).toMatchObject({ ok: true, address: "10.1.1.1" });
  });
});

describe("an allow-listed receiver port opens no other port of its host", () => {
  const policy = { allowHosts: ["127.0.0.1:8080", "localhost:8080"] };
  test("a webhook to another port of an allow-listed address is judged as if the address were not listed", async () => {
    expect(await reason("http://127.0.0.1:6379/", policy)).toBe("loopback address 127.0.0.1");
    expect(await reason("https://127.0.0.1:6379/", policy)).toBe("loopback address 127.0.0.1");
    expect(await reason("http://127.0.0.1/", policy)).toBe("loopback address 127.0.0.1");
    expect(await reason("https://localhost:6379/", policy)).toBe("loopback address 127.0.0.1");
    expect(checkUrlForm("http://127.0.0.1:6379/", policy)).toEqual({ ok: false, reason: "loopback address 127.0.0.1" });
  });
  test("the listed port passes, and the check's URL (with its port) is the one delivery connects to", async () => {
    const check = await checkWebhookUrl("http://127.0.0.1:8080/hook", policy, dns);
    expect(check).toMatchObject({ ok: true, address: "127.0.0.1" });
    if (check.ok) expect(check.url.port).toBe("8080");
  });
});
