// Every Lua script has one typed definition (src/journal/lua/<name>.ts) whose keys are those the script's header names,
// in its order; an undocumented reply is an error, never a guess; and a definition rejects a wrong number of keys.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { defineScript, type Script, UnexpectedScriptReplyError } from "../../../src/journal/scripts.ts";

const dir = new URL("../../../src/journal/lua/", import.meta.url);
const luaFiles = readdirSync(dir).filter((file) => file.endsWith(".lua"));
const definitionFiles = readdirSync(dir).filter((file) => file.endsWith(".ts"));

type AnyScript = Script<string, string, unknown>;

/** The negative codes of a definition file's code tables (its exports named …_CODES). */
async function tableCodes(file: string): Promise<number[]> {
  const module = (await import(new URL(file, dir).href)) as Record<string, unknown>;
  const codes = Object.entries(module)
    .filter(([name]) => name.endsWith("_CODES"))
    .flatMap(([, table]) => Object.keys(table as object).map(Number));
  return [...new Set(codes.filter((code) => code < 0))].sort();
}

/** The negative codes a script's header documents in its Returns section. */
function documentedCodes(file: string): number[] {
  const header = readFileSync(new URL(file, dir), "utf8").split("]]")[0] ?? "";
  const returns = header.slice(header.indexOf("Returns:"));
  return [...new Set([...returns.matchAll(/(?:^|[\s;])-(\d+) /g)].map((m) => -Number(m[1])))].sort();
}

async function definitions(): Promise<AnyScript[]> {
  const found: AnyScript[] = [];
  for (const file of definitionFiles) {
    const module = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) {
      if (typeof value === "object" && value !== null && "run" in value && "decode" in value) {
        found.push(value as AnyScript);
      }
    }
  }
  return found;
}

/** The key names a script's header gives, in KEYS order (the first `KEYS[i] name` of each i). */
function headerKeys(file: string): string[] {
  const header = readFileSync(new URL(file, dir), "utf8").split("]]")[0] ?? "";
  const names = new Map<number, string>();
  for (const [, index, name] of header.matchAll(/KEYS\[(\d+)\]\s+(\w+)/g)) {
    if (!names.has(Number(index))) names.set(Number(index), name ?? "");
  }
  return [...names.entries()].sort(([a], [b]) => a - b).map(([, name]) => name);
}

test("each script file has exactly one definition, whose keys are its header's, in order", async () => {
  const all = await definitions();
  expect(all.map((d): string => d.name).sort()).toEqual(luaFiles.map((f) => f.replace(/-(\d+|n)\.lua$/, "")).sort());
  for (const file of luaFiles) {
    const definition = all.find((d) => d.name === file.replace(/-(\d+|n)\.lua$/, ""));
    expect({ file, keys: definition?.keys }).toEqual({ file, keys: headerKeys(file) });
  }
});

test("each definition's code tables name every negative code its script documents, and no other", async () => {
  const all = await definitions();
  for (const file of definitionFiles) {
    const module = (await import(new URL(file, dir).href)) as Record<string, unknown>;
    const script = Object.values(module).find((value) => all.includes(value as AnyScript)) as AnyScript | undefined;
    const lua = luaFiles.find((name) => name.startsWith(`${script?.name}-`)) ?? "";
    expect({ file, codes: await tableCodes(file) }).toEqual({ file, codes: documentedCodes(lua) });
  }
});

test("a definition with another number of keys than its file name says is refused at load", () => {
  expect(() => defineScript({ name: "lease", keys: ["a", "b"], args: [], decode: () => 0 })).toThrow(
    "script lease takes 1 keys, its definition names 2",
  );
});

test("a script with as many keys as its call passes (-n.lua) sends their count, the keys, then its arguments", async () => {
  const { WEIGH } = await import("../../../src/journal/lua/weigh.ts");
  expect(WEIGH.argv({}, { bound: 5000, withArtifacts: "1" }, ["task:a", "chunks:a"])).toEqual([
    2,
    "task:a",
    "chunks:a",
    5000,
    "1",
  ]);
  expect(() => defineScript({ name: "weigh", keys: ["task"], args: [], decode: () => 0 })).toThrow(
    "script weigh takes n keys, its definition names 1",
  );
  expect(() => defineScript({ name: "lease", keys: [], args: [], decode: () => 0 })).toThrow(
    "script lease takes 1 keys, its definition names 0",
  );
});

test("an undocumented reply is an UnexpectedScriptReplyError naming the script", async () => {
  const { RENEW } = await import("../../../src/journal/lua/renew.ts");
  const { CLAIM } = await import("../../../src/journal/lua/claim.ts");
  expect(RENEW.decode(0)).toBe("ok");
  expect(() => RENEW.decode(7)).toThrow(UnexpectedScriptReplyError);
  expect(() => RENEW.decode(7)).toThrow("unexpected script reply 7 from renew");
  expect(() => CLAIM.decode(-9)).toThrow(UnexpectedScriptReplyError);
  expect(() => CLAIM.decode([1, "two"])).toThrow(UnexpectedScriptReplyError);
});
