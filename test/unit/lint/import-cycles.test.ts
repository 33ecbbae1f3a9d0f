// `npm run lint` fails on an import cycle: Biome's noImportCycles rule is an error in biome.json. Two modules that
// import each other, written for the test under src/, must fail the check; the repository itself passes it.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("../../../", import.meta.url).pathname;
const biome = join(root, "node_modules/.bin/biome");

function lintCycles(path: string): { code: number; output: string } {
  const run = Bun.spawnSync([biome, "lint", "--only=suspicious/noImportCycles", path], { cwd: root });
  return { code: run.exitCode, output: `${run.stdout.toString()}${run.stderr.toString()}` };
}

test("two modules that import each other fail the lint", () => {
  const dir = mkdtempSync(join(root, "src/.cycle-"));
  try {
    writeFileSync(join(dir, "a.ts"), 'import { b } from "./b.ts";\n\nexport const a = (): string => "a" + b();\n');
    writeFileSync(join(dir, "b.ts"), 'import { a } from "./a.ts";\n\nexport const b = (): string => "b" + a.name;\n');
    const { code, output } = lintCycles(dir);
    expect(code).not.toBe(0);
    expect(output).toContain("noImportCycles");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test("the sources have no import cycle", () => {
  const { code, output } = lintCycles(join(root, "src"));
  expect(output).not.toContain("noImportCycles");
  expect(code).toBe(0);
}, 60_000);
