#!/usr/bin/env bun
// The a2a-runtime command line's entry. On Bun it first makes sure the allocator keeps freed memory (./cli/allocator.ts),
// starting itself again in place when it must, and only then loads the commands (./cli/program.ts).
import { allocatorRestart } from "./cli/allocator.ts";

type Execve = (file: string, args: string[], env: Record<string, string>) => never;

const restart = allocatorRestart(process);
// (Bun has process.execve, as recent Node.js does; a Bun without it runs on with the allocator's defaults)
const execve = (process as unknown as { execve?: Execve }).execve;
if (restart && execve) execve.call(process, restart.file, restart.args, restart.env);
await import("./cli/program.ts");
