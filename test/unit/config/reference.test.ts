// The configuration reference in docs/ is what the schema says: regenerate it with `npm run docs:config`.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { renderConfigurationReference } from "../../../src/config/reference.ts";

test("docs/configuration.md matches the configuration schema (run `npm run docs:config` when this fails)", () => {
  const onDisk = readFileSync(new URL("../../../docs/configuration.md", import.meta.url), "utf8");
  expect(onDisk).toBe(renderConfigurationReference());
});

test("the reference names every environment variable and every profile field", () => {
  const text = renderConfigurationReference();
  for (const name of ["A2A_SERVER_BLOCKING_WAIT_SECONDS", "A2A_WORKER_LIVENESS_SECONDS", "A2A_REDIS_KEY_PREFIX"]) {
    expect(text).toContain(name);
  }
  for (const field of [
    "`fullTextCheck`",
    "`retentionSeconds`",
    "`guardrails.denyPatterns`",
    "`quota.maxActiveTasks`",
  ]) {
    expect(text).toContain(field);
  }
});
