// A2A_* variables that set nothing are found, with the name most likely meant; every real one passes.
import { expect, test } from "bun:test";
import { configEnvironmentVariables, OTHER_VARIABLES, unknownEnvironmentVariables } from "../../../src/config/index.ts";

test("typos and missing words are flagged with a suggestion; unrelated names without one", () => {
  expect(
    unknownEnvironmentVariables({
      A2A_SERVER_PROT: "1",
      A2A_PORT: "1",
      A2A_WORKER_ACTOR: "3",
      A2A_SOMETHING_ELSE_ENTIRELY: "x",
      PATH: "/bin",
    }),
  ).toEqual([
    { name: "A2A_PORT", suggestion: "A2A_SERVER_PORT" },
    { name: "A2A_SERVER_PROT", suggestion: "A2A_SERVER_PORT" },
    { name: "A2A_SOMETHING_ELSE_ENTIRELY", suggestion: undefined },
    { name: "A2A_WORKER_ACTOR", suggestion: "A2A_WORKER_ACTORS" },
  ]);
});

test("every config variable and every other variable the runtime reads is known", () => {
  const env: Record<string, string> = {};
  for (const row of configEnvironmentVariables()) env[row.env] = "x";
  for (const name of OTHER_VARIABLES) env[name] = "x";
  expect(unknownEnvironmentVariables(env)).toEqual([]);
  expect(Object.keys(env)).toContain("A2A_HANDLERS");
});
