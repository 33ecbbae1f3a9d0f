// A run's pinned workspace: a directory that file tools cannot leave. Every path is resolved against the root and
// refused when it escapes, by `..`, by an absolute path or through a symbolic link.
import { mkdir, readdir, readFile, realpath, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

export class WorkspaceEscapeError extends Error {
  override readonly name = "WorkspaceEscapeError";
  constructor(readonly path: string) {
    super(`path ${JSON.stringify(path)} is outside the workspace`);
  }
}

function inside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** The real path of `path`, or of its nearest existing ancestor joined with the rest (for files not yet written). */
async function realpathLenient(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    const parent = dirname(path);
    if (parent === path) return path;
    return join(await realpathLenient(parent), relative(parent, path));
  }
}

export class Workspace {
  private constructor(
    /** The workspace directory, symbolic links resolved. */
    readonly root: string,
  ) {}

  /** Opens (and creates when missing) the directory `path`, relative to the process's working directory. */
  static async open(path: string): Promise<Workspace> {
    const absolute = resolve(path);
    await mkdir(absolute, { recursive: true });
    return new Workspace(await realpath(absolute));
  }

  /** The real absolute path of `path` (relative to the root); throws WorkspaceEscapeError when it leaves the root. */
  async resolve(path: string): Promise<string> {
    if (path.includes("\0")) throw new WorkspaceEscapeError(path);
    const candidate = resolve(this.root, path);
    if (!inside(this.root, candidate)) throw new WorkspaceEscapeError(path);
    const real = await realpathLenient(candidate);
    if (!inside(this.root, real)) throw new WorkspaceEscapeError(path);
    return real;
  }

  /** Reads a UTF-8 file, at most `maxBytes` of it. */
  async readText(path: string, maxBytes = 65_536): Promise<string> {
    const data = await readFile(await this.resolve(path));
    return data.subarray(0, maxBytes).toString("utf8");
  }

  async writeText(path: string, text: string): Promise<void> {
    const target = await this.resolve(path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, text, "utf8");
  }

  /** Names in a directory of the workspace, directories marked with a trailing "/". */
  async list(path = "."): Promise<string[]> {
    const entries = await readdir(await this.resolve(path), { withFileTypes: true });
    return entries.map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name)).sort();
  }
}
