// Static checks of every Lua script: the loader serves it with its includes expanded, its header documents each KEYS
// and each negative return it has, it touches keys only through KEYS (an included function only through its `…Key`
// parameters, which every script passes a KEYS[i], or a state index named after its client index's key), and no
// refusal comes after its first write (Redis does not roll back), counting a call of an included function that writes
// as a write.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { KeySpace } from "../../../src/journal/keys.ts";
import { expandIncludes, type ScriptName, scriptSource } from "../../../src/journal/scripts.ts";

const dir = new URL("../../../src/journal/lua/", import.meta.url);
const includeDir = new URL("include/", dir);
const files = readdirSync(dir).filter((file) => file.endsWith(".lua"));
const includes = readdirSync(includeDir).filter((file) => file.endsWith(".lua"));

const WRITE_COMMANDS =
  "XADD|HSET|HINCRBY|SET|SADD|SREM|ZADD|ZREM|ZREMRANGEBYSCORE|EXPIRE|PEXPIRE|PERSIST|DEL|XACK|XDEL|XCLAIM|PUBLISH|HDEL|INCR|RPUSH";
const WRITES = new RegExp(`redis\\.call\\('(${WRITE_COMMANDS})'`);
/**
 * The lease scripts drop expired leases before refusing (directly, or in the lease-pair include's room check, which
 * accept's waiting leases use too); their headers document that one exception.
 */
const CLEANUP_BEFORE_REFUSAL: Record<string, string> = {
  "lease-1.lua": "ZREMRANGEBYSCORE",
  "leasePair-2.lua": "leasePairRoom",
  "accept-15.lua": "leasePairRoom",
};

/**
 * The one place a script builds keys instead of receiving them: a run's end claims the actor's next run, whose keys it
 * learns from the queue entry it reads (one node only; on a Cluster the ledger never asks). The function is exempt
 * from the KEYS rule; instead each key it builds must be KeySpace's, evaluated here with shard 3, task "T", client "C".
 */
const DERIVED_KEYS: Record<string, { fn: string; stem: string; keys: Record<string, (k: KeySpace) => string> }> = {
  "transition-22.lua": {
    fn: "claimNext",
    stem: "ARGV[19] .. '{' .. shard .. '}:'",
    keys: {
      "stem .. 'queue'": (k) => k.queue(3),
      "stem .. 'task:' .. taskId": (k) => k.task(3, "T"),
      "stem .. 'client:' .. client": (k) => k.client(3, "C"),
      "stem .. 'run:' .. taskId": (k) => k.run(3, "T"),
      "clientKey .. ':running'": (k) => k.clientRunning(3, "C"),
      "clientKey .. ':deferred'": (k) => k.clientDeferred(3, "C"),
      "stem .. 'deferred'": (k) => k.deferredClients(3),
      "stem .. 'chunks:' .. taskId": (k) => k.artifactChunks(3, "T"),
    },
  },
};

/** A Lua concatenation of quoted strings and names, evaluated with `names`. */
function concat(expression: string, names: Record<string, string>): string {
  return expression
    .split(" .. ")
    .map((part) => (/^'.*'$/.test(part) ? part.slice(1, -1) : (names[part] ?? `<${part}>`)))
    .join("");
}

/** A script's body without the local function `name` (its definition up to the `end` at the start of a line). */
function withoutFunction(body: string, name: string): { rest: string; fn: string } {
  const match = new RegExp(`^local function ${name}\\(\\)\\n[\\s\\S]*?^end\\n`, "m").exec(body);
  if (!match) throw new Error(`no local function ${name}`);
  return { rest: body.replace(match[0], ""), fn: match[0] };
}

interface IncludedFunction {
  name: string;
  /** Positions (0-based) of the parameters that are keys (named `…Key`). */
  keyParams: number[];
  writes: boolean;
  /** The negative codes the function returns (a script that returns its result documents them). */
  codes: number[];
}

/** The functions the include files define, with their key parameters and whether their bodies write. */
const included: IncludedFunction[] = includes.flatMap((file) => {
  const source = readFileSync(new URL(file, includeDir), "utf8");
  const chunks = source.split(/^local function /m).slice(1);
  return chunks.map((chunk) => {
    const [, name = "", params = ""] = /^(\w+)\(([^)]*)\)/.exec(chunk) ?? [];
    const keyParams = params
      .split(",")
      .map((p) => p.trim())
      .flatMap((p, i) => (p.endsWith("Key") ? [i] : []));
    return { name, keyParams, writes: WRITES.test(chunk), codes: negativeCodes(chunk, /return -(\d+)/g) };
  });
});

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

test("every script file is registered with the loader, which serves it with its includes expanded", () => {
  expect(files).toContain("accept-15.lua");
  for (const file of files) {
    const name = file.replace(/-(\d+|n)\.lua$/, "") as ScriptName;
    const source = readFileSync(new URL(file, dir), "utf8");
    expect(scriptSource(name)).toBe(expandIncludes(source));
    expect(scriptSource(name)).not.toContain("@include");
  }
  expect(scriptSource("accept")).toContain("local function addStoredBytes(");
});

describe.each(includes)("include/%s", (file) => {
  const source = readFileSync(new URL(file, includeDir), "utf8");

  test("opens with a header and defines only local functions", () => {
    expect(source).toStartWith("--[[");
    expect(
      source
        .split("\n")
        .filter((line) => /^\S/.test(line) && !/^(local function|local [A-Z_]+ = |end|--|\]\])/.test(line)),
    ).toEqual([]);
  });

  test("touches keys only through its …Key parameters", () => {
    for (const call of source.matchAll(/redis\.call\('(\w+)'(?:,\s*([^,)]+))?/g)) {
      if (call[1] === "TIME") continue;
      // a notice goes to a channel, which is no key (Redis Cluster broadcasts it)
      if (call[1] === "PUBLISH") expect(call[2]).toMatch(/^\w+$/);
      // the one key derived from another: a state index is named after its client index (same hash tag, same slot)
      else if (file === "task-index.lua" && call[2]?.startsWith("stateTasksKey(")) {
        expect(call[2]).toMatch(/^stateTasksKey\(clientTasksKey$/);
      } else expect(`${call[1]} ${call[2]}`).toMatch(/^\w+ \w+Key$/);
    }
  });
});

describe.each(files)("%s", (file) => {
  const { header, body: whole, keys, returns } = parts(file);
  const derived = DERIVED_KEYS[file];
  const body = derived ? withoutFunction(whole, derived.fn).rest : whole;
  const used = included.filter((fn) => new RegExp(`\\b${fn.name}\\(`).test(body));

  // a `-n.lua` script takes as many keys as its call passes, and reaches them by a loop's index
  const variadic = file.endsWith("-n.lua");

  test("the header documents every KEYS the file name counts, and a Returns section", () => {
    if (variadic) expect(header).toContain("KEYS[1..n]");
    for (let i = 1; i <= keys; i++) expect(header).toContain(`KEYS[${i}]`);
    if (!variadic) expect(header).not.toContain(`KEYS[${keys + 1}]`);
    expect(returns.startsWith("Returns:")).toBe(true);
  });

  test("every key is reached through KEYS[1..n], never built from strings", () => {
    const indexes = [...body.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
    if (variadic) expect(indexes).toEqual([]);
    for (const index of indexes) expect(index).toBeLessThanOrEqual(keys);
    for (const call of body.matchAll(/redis\.call\('(\w+)'(?:,\s*([^,)]+))?/g)) {
      if (call[1] === "TIME" || call[1] === "PUBLISH") continue;
      expect(`${call[1]} ${call[2]}`).toMatch(variadic ? /^\w+ KEYS\[i(?: \+ 1)?\]$/ : /^\w+ KEYS\[\d+\]$/);
    }
    for (const fn of used) {
      for (const call of body.matchAll(new RegExp(`\\b${fn.name}\\(([^)]*)\\)`, "g"))) {
        const args = (call[1] ?? "").split(",").map((arg) => arg.trim());
        for (const position of fn.keyParams) expect(`${fn.name}: ${args[position]}`).toMatch(/: KEYS\[\d+\]$/);
      }
    }
  });

  if (derived) {
    test(`${derived.fn} builds only KeySpace's keys, from the prefix, each as keys.ts names it`, () => {
      const fn = withoutFunction(whole, derived.fn).fn;
      const k = new KeySpace("a2a:", 4);
      expect(fn).toContain(`local stem = ${derived.stem}`);
      expect(concat(derived.stem, { "ARGV[19]": k.prefix, shard: "3" })).toBe(k.shard(3));
      const names = { stem: k.shard(3), taskId: "T", client: "C", clientKey: k.client(3, "C") };
      for (const [expression, expected] of Object.entries(derived.keys)) {
        expect(fn).toContain(expression);
        expect(concat(expression, names)).toBe(expected(k));
      }
      // no other key is built: every concatenation that starts from the stem or a derived key is one of the above
      const built = [...fn.matchAll(/\b(?:stem|clientKey) \.\. [^,)\n]+/g)].map((m) => m[0].trim());
      for (const expression of built) expect(Object.keys(derived.keys)).toContain(expression);
    });
  }

  test("the negative returns in the code are exactly the documented ones", () => {
    // a script that returns an included function's result (claim returns claimRun's) answers its codes too
    const returned = included.filter((fn) => new RegExp(`return ${fn.name}\\(`).test(body));
    const inCode = [
      ...new Set([...negativeCodes(body, /return -(\d+)/g), ...returned.flatMap((fn) => fn.codes)]),
    ].sort();
    const documented = negativeCodes(returns, /(?:^|[\s;])-(\d+) /g);
    expect(inCode).toEqual(documented);
  });

  test("no refusal comes after the first write", () => {
    const lines = body.split("\n");
    const allowed = CLEANUP_BEFORE_REFUSAL[file];
    const writers = included.filter((fn) => fn.writes && fn.name !== allowed).map((fn) => fn.name);
    const callsWriter = writers.length > 0 ? new RegExp(`^\\s*(?:\\w+\\s*=\\s*)?(${writers.join("|")})\\(`) : /$^/;
    const firstWrite = lines.findIndex((line) => {
      const write = WRITES.exec(line);
      return (write !== null && write[1] !== allowed) || callsWriter.test(line);
    });
    if (firstWrite < 0) return;
    const late = lines.slice(firstWrite).filter((line) => /return -\d/.test(line));
    expect(late).toEqual([]);
  });
});
