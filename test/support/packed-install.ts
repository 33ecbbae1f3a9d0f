// The package as a user gets it: `npm pack` of this checkout, installed into a fresh project without the registry.
// The tarball is unpacked into node_modules/a2a-runtime; its declared dependencies (and theirs, transitively) are
// linked from this checkout's node_modules, which npm ci filled from the same lockfile. Only the closure of what the
// package declares is linked: a module the package imports without declaring it does not resolve, as after npm install.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "./temp-dir.ts";

const ROOT = join(import.meta.dir, "../..");
const CHECKOUT_MODULES = join(ROOT, "node_modules");

interface PackageJson {
  name: string;
  bin?: string | Record<string, string>;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

function readPackage(dir: string): PackageJson {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
}

let packed: string | undefined;

/** `npm pack` of this checkout (its prepack writes the type declarations), once per test process. */
export function packTarball(): string {
  if (packed) return packed;
  const destination = tempDir("a2a-pack-");
  const run = spawnSync("npm", ["pack", "--silent", "--pack-destination", destination], {
    cwd: ROOT,
    encoding: "utf8",
  });
  if (run.status !== 0) throw new Error(`npm pack failed (${run.status}): ${run.stderr}`);
  const name = run.stdout.trim().split("\n").at(-1) ?? "";
  packed = join(destination, name);
  if (!existsSync(packed)) throw new Error(`npm pack wrote no ${packed}: ${run.stdout}`);
  return packed;
}

function linkBins(modules: string, packageDir: string, pkg: PackageJson): void {
  const bins = typeof pkg.bin === "string" ? { [pkg.name.split("/").at(-1) ?? pkg.name]: pkg.bin } : (pkg.bin ?? {});
  mkdirSync(join(modules, ".bin"), { recursive: true });
  for (const [name, target] of Object.entries(bins)) {
    const link = join(modules, ".bin", name);
    if (!existsSync(link)) symlinkSync(join(packageDir, target), link);
  }
}

/** Links `name` and everything it depends on from the checkout's node_modules into `modules`. */
function linkClosure(modules: string, names: readonly string[]): void {
  const pending = [...names];
  const seen = new Set<string>();
  while (pending.length > 0) {
    const name = pending.pop() ?? "";
    if (seen.has(name)) continue;
    seen.add(name);
    const source = join(CHECKOUT_MODULES, name);
    if (!existsSync(source)) continue; // an optional dependency for another platform, or one nested in its parent
    const target = join(modules, name);
    mkdirSync(dirname(target), { recursive: true });
    if (!existsSync(target)) symlinkSync(source, target, "dir");
    const pkg = readPackage(source);
    linkBins(modules, source, pkg);
    pending.push(...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {}));
  }
}

/**
 * Installs the tarball into `project` as `npm install <tarball>` would: the package in node_modules/a2a-runtime, its
 * dependencies resolvable, its command in node_modules/.bin. `extra` names packages the project itself depends on.
 */
export function installTarball(tarball: string, project: string, extra: readonly string[] = []): void {
  const modules = join(project, "node_modules");
  const packageDir = join(modules, "a2a-runtime");
  mkdirSync(packageDir, { recursive: true });
  const untar = spawnSync("tar", ["-xzf", tarball, "-C", packageDir, "--strip-components=1"], { encoding: "utf8" });
  if (untar.status !== 0) throw new Error(`tar failed: ${untar.stderr}`);
  const pkg = readPackage(packageDir);
  linkBins(modules, packageDir, pkg);
  linkClosure(modules, [...Object.keys(pkg.dependencies ?? {}), ...extra]);
}
