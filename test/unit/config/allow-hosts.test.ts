// The form of a push.allowHosts entry: which texts parse, to what, and why the others do not.
import { expect, test } from "bun:test";
import { parseAllowHost } from "../../../src/config/index.ts";

const entry = (text: string) => {
  const read = parseAllowHost(text);
  if (!read.ok) throw new Error(`${text}: ${read.problem}`);
  return read.entry;
};
const problem = (text: string) => {
  const read = parseAllowHost(text);
  if (read.ok) throw new Error(`${text} parsed as ${JSON.stringify(read.entry)}`);
  return read.problem;
};

test("a host without a port stands for the URL scheme's default port", () => {
  expect(entry("hooks.internal")).toEqual({ host: "hooks.internal", subdomains: false, port: "default" });
  expect(entry(" Hooks.Internal. ")).toEqual({ host: "hooks.internal", subdomains: false, port: "default" });
});

test("host:port names one port, host:* any port", () => {
  expect(entry("127.0.0.1:8080")).toEqual({ host: "127.0.0.1", subdomains: false, port: 8080 });
  expect(entry("localhost:1")).toEqual({ host: "localhost", subdomains: false, port: 1 });
  expect(entry("localhost:65535")).toMatchObject({ port: 65535 });
  expect(entry("hooks.internal:*")).toEqual({ host: "hooks.internal", subdomains: false, port: "any" });
});

test("hosts are spelled as the URL parser spells them", () => {
  expect(entry("127.1:80").host).toBe("127.0.0.1");
  expect(entry("0x7f.0.0.1").host).toBe("127.0.0.1");
  expect(entry("[0:0:0:0:0:0:0:1]:9000")).toEqual({ host: "::1", subdomains: false, port: 9000 });
  expect(entry("[::FFFF:127.0.0.1]").host).toBe("::ffff:7f00:1");
});

test("*.suffix covers the names under a domain, with the same port forms", () => {
  expect(entry("*.hooks.internal")).toEqual({ host: "hooks.internal", subdomains: true, port: "default" });
  expect(entry("*.hooks.internal:8443")).toEqual({ host: "hooks.internal", subdomains: true, port: 8443 });
  expect(entry("*.hooks.internal:*")).toMatchObject({ subdomains: true, port: "any" });
});

test("malformed entries are refused with the reason", () => {
  expect(problem("")).toBe("must not be empty");
  expect(problem("  ")).toBe("must not be empty");
  expect(problem("::1")).toContain("write an IPv6 address in brackets");
  expect(problem("fe80::1:80")).toContain("write an IPv6 address in brackets");
  for (const port of ["0", "65536", "80a", "", "-1", "123456"]) {
    expect(problem(`hooks.internal:${port}`)).toContain("the port must be 1 to 65535, or * for any port");
  }
  for (const text of ["hooks/x", "user@hooks", "a b", "http://hooks", "*", "*.", "hooks?x", "%41", ":80", "a*b"]) {
    expect(problem(text)).toMatch(/not a host name|IPv6|the port must be/);
  }
  expect(problem("[::1")).toContain("[ without ]");
  expect(problem("[::1]x")).toContain("unexpected text after ]");
  expect(problem("[hooks.internal]")).toContain("not a host name");
  expect(problem("999.1.1.1")).toContain("not a host name");
  expect(problem("*.10.0.0.1")).toBe("*. must be followed by a domain name");
  expect(problem("*.[::1]")).toBe("*. must be followed by a domain name");
});
