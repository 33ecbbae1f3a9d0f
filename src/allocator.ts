// Bun's allocator, mimalloc, gives freed memory back to the system 10 ms after it is freed (its purge delay). Under a
// steady load a process frees and takes the same memory again many times a second, so each purge is a system call
// that interrupts the other cores to flush their address translations, and each reuse a page fault: about a fifth of
// the gateway's and the actors' CPU per blocking round trip (docs/benchmarks.md, finding 29). a2a-runtime's processes
// keep freed memory for reuse instead (a process's resident size stays at its high-water mark), unless the
// environment sets the delay itself. mimalloc reads its options when a process starts, so they come from the
// environment the process is started with: bin/a2a-runtime sets it for every command, the supervisor for its actors.

/** mimalloc's purge delay (ms); -1 never purges. */
export const PURGE_DELAY_VARIABLE = "MIMALLOC_PURGE_DELAY";
/** What a2a-runtime's processes run with when the environment does not say (bin/a2a-runtime sets the same). */
export const PURGE_DELAY_DEFAULT = "-1";

/** Sets the purge delay in `env` (a child process's environment) unless it is set already. */
export function keepFreedMemory(env: Record<string, string>): void {
  env[PURGE_DELAY_VARIABLE] ??= PURGE_DELAY_DEFAULT;
}
