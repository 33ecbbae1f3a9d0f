// lazyChild (src/log.ts), a run's logger: it becomes a pino child only when first used, with the bindings and the redaction a
// child made at once would have.
import { expect, test } from "bun:test";
import { createLogger, lazyChild } from "../../../src/log.ts";

test("no child until first used; then one child, its bindings on every line, secrets still redacted", () => {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger("actor", "info", {
    write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>),
  } as unknown as NodeJS.WritableStream);
  let children = 0;
  const makeChild = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof makeChild>) => {
    children += 1;
    return makeChild(...args);
  }) as typeof logger.child;

  const log = lazyChild(logger, { taskId: "t1", runId: "r1" });
  expect(children).toBe(0);
  log.debug("below the level");
  expect(lines).toEqual([]);
  log.warn({ authorization: "Bearer secret-key" }, "lease lost");
  log.info("canceled");
  expect(children).toBe(1);
  expect(lines.map((line) => [line.msg, line.taskId, line.runId, line.name])).toEqual([
    ["lease lost", "t1", "r1", "actor"],
    ["canceled", "t1", "r1", "actor"],
  ]);
  expect(lines[0]?.authorization).toBe("[redacted]");
  expect(JSON.stringify(lines)).not.toContain("secret-key");
});
