// `a2a-runtime init [directory]`: scaffolds a project's first agent: a config file with one profile bound to a
// handler module, that module (and a tsconfig.json when there is none), and the two commands that run it and talk to
// it. It never overwrites a file.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { CommandError, EXIT_CONFIG } from "./command-error.ts";
import type { CliContext } from "./context.ts";

export const CONFIG_FILE = "a2a-runtime.json";
export const HANDLER_FILE = "handlers/hello.ts";

const CONFIG = {
  handlers: [`./${HANDLER_FILE}`],
  profiles: [
    {
      name: "hello",
      handler: "hello",
      description: "Greets whoever writes to it.",
      skill: { id: "greet", name: "Greet", description: "Answers a name with a greeting.", examples: ["Ada"] },
    },
  ],
};

const HANDLER = `// The handler of the profile "hello": whatever it emits streams to the client and is kept in the task.
import { defineHandler, textOf } from "a2a-runtime";

export const hello = defineHandler("hello", async (ctx) => {
  const name = textOf(ctx.input).trim();
  if (name === "") return ctx.requireInput("Who shall I greet?"); // the client's next message resumes this task

  await ctx.emit.progress(\`Thinking of a greeting for \${name}\`);
  await ctx.emit.text(\`Hello, \${name}! \`);
  await ctx.emit.text("Welcome to a2a-runtime.");
  // returning nothing completes the task
});
`;

/** For editors and tsc: Bun's module settings; the package's type declarations resolve through its exports. */
const TSCONFIG = {
  compilerOptions: {
    target: "ESNext",
    module: "Preserve",
    moduleResolution: "bundler",
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    verbatimModuleSyntax: true,
  },
  include: ["handlers"],
};

export function registerInit(program: Command, context: CliContext): void {
  program
    .command("init")
    .description("scaffold an agent: a config file with one profile, its handler module, and how to run them")
    .argument("[directory]", "where to write the files", ".")
    .action((directory: string) => {
      const root = resolve(directory);
      const files: [string, string][] = [
        [CONFIG_FILE, `${JSON.stringify(CONFIG, null, 2)}\n`],
        [HANDLER_FILE, HANDLER],
      ];
      const taken = files.map(([name]) => name).filter((name) => existsSync(join(root, name)));
      if (taken.length > 0)
        throw new CommandError(
          `${taken.join(" and ")} already exist in ${root}: init writes nothing over them`,
          EXIT_CONFIG,
        );
      // A project's own tsconfig.json is left as it is.
      if (!existsSync(join(root, "tsconfig.json")))
        files.push(["tsconfig.json", `${JSON.stringify(TSCONFIG, null, 2)}\n`]);
      for (const [name, text] of files) {
        mkdirSync(join(root, name, ".."), { recursive: true });
        writeFileSync(join(root, name), text);
      }
      const where = relative(process.cwd(), root);
      const config = where === "" ? CONFIG_FILE : join(where, CONFIG_FILE);
      context.print(`Wrote ${files.map(([name]) => name).join(", ")}: profile "hello", handled by ./${HANDLER_FILE}.`);
      context.print("");
      context.print("Run it (Redis from REDIS_URL, or an embedded redis-server):");
      context.print(`  npx a2a-runtime start --config ${config}`);
      context.print("Then, in another terminal, with the demo key it prints:");
      context.print('  A2A_API_KEY=<demo key> npx a2a-runtime send --url http://127.0.0.1:8080 "Ada"');
    });
}
