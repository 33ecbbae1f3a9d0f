// Bun's allocator, mimalloc, gives freed memory back to the system 10 ms after it is freed (its purge delay). Under a
// steady load a process frees and takes the same memory again many times a second, so each purge is a system call
// that interrupts the other core to flush its address translations, and each reuse a page fault: about a fifth of the
// gateway's and the actors' CPU per blocking round trip (docs/benchmarks.md, finding 29). The a2a-runtime processes
// keep freed memory for reuse instead, so a process's resident size stays at its high-water mark, unless the
// environment sets the delay itself (MIMALLOC_PURGE_DELAY in milliseconds; mimalloc's default is 10).
// mimalloc reads its options once, when the process starts, so the entry starts itself again with the option set:
// `execve` replaces the process in place (same pid, same open files) before the command line is even loaded.
// This module imports nothing: the entry runs it first.

/** mimalloc's purge delay (ms); -1 never purges. */
export const PURGE_DELAY_VARIABLE = "MIMALLOC_PURGE_DELAY";
/** What the a2a-runtime processes run with when the environment does not say. */
export const PURGE_DELAY_DEFAULT = "-1";

/** What the entry needs to know of its own process (process, in production). */
export interface OwnProcess {
  readonly versions: { readonly bun?: string };
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
}

export interface Restart {
  file: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * The same command line again with the purge delay set: on Bun, when the environment does not set it; undefined when
 * the process runs as it should already (set by the operator or by this restart, or not on Bun: Deno has its own
 * allocator). The runtime's own flags (`bun --smol src/cli.ts …`) are kept.
 */
export function allocatorRestart(own: OwnProcess): Restart | undefined {
  if (own.versions.bun === undefined || own.env[PURGE_DELAY_VARIABLE] !== undefined) return undefined;
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(own.env)) if (value !== undefined) env[name] = value;
  env[PURGE_DELAY_VARIABLE] = PURGE_DELAY_DEFAULT;
  return { file: own.execPath, args: [own.execPath, ...own.execArgv, ...own.argv.slice(1)], env };
}
