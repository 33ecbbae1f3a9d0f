// Invariant 8, statically: the gateway's module graph (every static and dynamic import reachable from
// src/gateway/index.ts) holds no webhook delivery code (src/push) and no actor code, so no request can send a webhook.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

const SRC = resolve(import.meta.dir, "../../../src");
const transpiler = new Bun.Transpiler({ loader: "ts" });

/** Every project file reachable from `entry` through relative imports (packages are not followed). */
function moduleGraph(entry: string, options: { staticOnly?: boolean } = {}): Set<string> {
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.endsWith(".ts")) continue;
    const source = readFileSync(file, "utf8").replace(/^#!.*\n/, "");
    for (const { path, kind } of transpiler.scanImports(source)) {
      if (!path.startsWith(".")) continue;
      if (options.staticOnly && kind === "dynamic-import") continue;
      const target = resolve(dirname(file), path);
      if (!existsSync(target)) throw new Error(`${file} imports ${path}, which does not exist`);
      pending.push(target);
    }
  }
  return seen;
}

function under(files: Set<string>, area: string): string[] {
  return [...files].filter((file) => file.startsWith(`${SRC}/${area}/`)).map((file) => file.slice(SRC.length + 1));
}

describe("the gateway's module graph", () => {
  const gateway = moduleGraph(`${SRC}/gateway/index.ts`);

  test("contains no file of src/push and none of src/actors", () => {
    expect(under(gateway, "push")).toEqual([]);
    expect(under(gateway, "actors")).toEqual([]);
  });

  test("is the whole gateway: the push config methods and the journal's URL form check are in it", () => {
    expect(gateway.has(`${SRC}/gateway/operations/push-configs.ts`)).toBe(true);
    expect(gateway.has(`${SRC}/gateway/push-config-rules.ts`)).toBe(true);
    expect(gateway.has(`${SRC}/journal/webhook-url.ts`)).toBe(true);
    expect(under(gateway, "gateway").length).toBeGreaterThan(20);
  });

  test("the same walk from an actor does reach the delivery code (the check can see it)", () => {
    expect(under(moduleGraph(`${SRC}/actors/actor.ts`), "push")).toContain("push/deliver.ts");
  });
});

test("the CLI loads worker code only when a worker command runs: `a2a-runtime gateway` never loads push or actors", () => {
  const cli = moduleGraph(`${SRC}/cli.ts`, { staticOnly: true });
  expect(under(cli, "push")).toEqual([]);
  expect(under(cli, "actors")).toEqual([]);
  expect(under(moduleGraph(`${SRC}/cli.ts`), "push")).toContain("push/deliver.ts");
});
