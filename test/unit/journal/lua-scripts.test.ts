// Static checks of every Lua script: the loader serves it, its header documents each KEYS and each negative return
// it has, it touches keys only through KEYS, and no refusal comes after its first write (Redis does not roll back).
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { type ScriptName, scriptSource } from "../../../src/journal/index.ts";

const dir = new URL("../../../src/journal/lua/", import.meta.url);
const files = readdirSync(dir).filter((file) => file.endsWith(".lua"));

const WRITES =
  /redis\.call\('(XADD|HSET|SET|SADD|SREM|ZADD|ZREM|ZREMRANGEBYSCORE|EXPIRE|PEXPIRE|PERSIST|DEL|XACK|XDEL|XCLAIM|PUBLISH|HDEL|INCR)'/;
/** The lease scripts drop expired leases before refusing; their headers document that one exception. */
const CLEANUP_BEFORE_REFUSAL: Record<string, string> = {
  "lease-1.lua": "ZREMRANGEBYSCORE",
  "streamLease-2.lua": "ZREMRANGEBYSCORE",
};

function parts(file: string): { header: string; body: string; keys: number; returns: string } {
  const source = readFileSync(new URL(file, dir), "utf8");
  const match = /^--\[\[([\s\S]*?)\]\]\n([\s\S]*)$/.exec(source);
  if (!match) throw new Error(`${file} has no --[[ header ]]`);
  const header = match[1] ?? "";
  return {
    header,
    body: match[2] ?? "",
    keys: Number(/-(\d+)\.lua$/.exec(file)?.[1]),
    returns: header.slice(header.indexOf("Returns:")),
  };
}

function negativeCodes(text: string, pattern: RegExp): number[] {
  return [...new Set([...text.matchAll(pattern)].map((m) => Number(m[1])))].sort();
}

test("every script file is registered with the loader, which serves it as it is", () => {
  expect(files).toContain("accept-11.lua");
  for (const file of files) {
    const name = file.replace(/-\d+\.lua$/, "") as ScriptName;
    expect(scriptSource(name)).toBe(readFileSync(new URL(file, dir), "utf8"));
  }
});

describe.each(files)("%s", (file) => {
  const { header, body, keys, returns } = parts(file);

  test("the header documents every KEYS the file name counts, and a Returns section", () => {
    for (let i = 1; i <= keys; i++) expect(header).toContain(`KEYS[${i}]`);
    expect(header).not.toContain(`KEYS[${keys + 1}]`);
    expect(returns.startsWith("Returns:")).toBe(true);
  });

  test("every key is reached through KEYS[1..n], never built from strings", () => {
    const used = [...body.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
    for (const index of used) expect(index).toBeLessThanOrEqual(keys);
    for (const call of body.matchAll(/redis\.call\('(\w+)'(?:,\s*([^,)]+))?/g)) {
      if (call[1] === "TIME" || call[1] === "PUBLISH") continue;
      expect(`${call[1]} ${call[2]}`).toMatch(/^\w+ KEYS\[\d+\]$/);
    }
  });

  test("the negative returns in the code are exactly the documented ones", () => {
    const inCode = negativeCodes(body, /return -(\d+)/g);
    const documented = negativeCodes(returns, /(?:^|[\s;])-(\d+) /g);
    expect(inCode).toEqual(documented);
  });

  test("no refusal comes after the first write", () => {
    const lines = body.split("\n");
    const allowed = CLEANUP_BEFORE_REFUSAL[file];
    const firstWrite = lines.findIndex((line) => {
      const write = WRITES.exec(line);
      return write !== null && write[1] !== allowed;
    });
    if (firstWrite < 0) return;
    const late = lines.slice(firstWrite).filter((line) => /return -\d/.test(line));
    expect(late).toEqual([]);
  });
});
