// A profile's input or output JSON Schema becomes one compiled check; violations are JSON Pointers with a message.
import { expect, test } from "bun:test";
import { compileJsonSchema } from "../../../src/config/index.ts";

const ok = (check: ReturnType<typeof compileJsonSchema>, value: unknown) => check(value).length === 0;

test("types, required, ranges, patterns, enums and nesting are checked", () => {
  const check = compileJsonSchema({
    type: "object",
    properties: {
      city: { type: "string", minLength: 2, pattern: "^[A-Z]" },
      nights: { type: "integer", minimum: 1, maximum: 30 },
      class: { enum: ["economy", "business"] },
      travellers: { type: "array", items: { type: "object", properties: { age: { type: "number" } } }, minItems: 1 },
      note: { type: ["string", "null"] },
    },
    required: ["city", "nights"],
    additionalProperties: false,
  });
  expect(ok(check, { city: "Oslo", nights: 2 })).toBe(true);
  expect(ok(check, { city: "Oslo", nights: 2, class: "business", travellers: [{ age: 40 }], note: null })).toBe(true);
  expect(ok(check, { city: "oslo", nights: 2 })).toBe(false);
  expect(ok(check, { city: "Oslo", nights: 0 })).toBe(false);
  expect(ok(check, { city: "Oslo", nights: 2.5 })).toBe(false);
  expect(ok(check, { city: "Oslo", nights: 2, class: "first" })).toBe(false);
  expect(ok(check, { city: "Oslo", nights: 2, travellers: [] })).toBe(false);
  expect(ok(check, "Oslo")).toBe(false);
  expect(check({ city: "Oslo" })).toEqual([{ pointer: "/nights", message: "Required property" }]);
  expect(check({ city: "Oslo", nights: 2, extra: 1 })).toEqual([{ pointer: "/extra", message: "Unknown property" }]);
});

test("anyOf, not, const, $ref and annotations such as format", () => {
  const check = compileJsonSchema({
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $defs: { small: { type: "integer", maximum: 10 } },
    title: "Pick",
    anyOf: [{ type: "string", format: "email" }, { $ref: "#/$defs/small" }],
    not: { const: 7 },
  });
  expect(ok(check, "not an email: format is an annotation")).toBe(true);
  expect(ok(check, 3)).toBe(true);
  expect(ok(check, 7)).toBe(false);
  expect(ok(check, 11)).toBe(false);
  expect(ok(check, true)).toBe(false);
});

test("draft-07 schemas are understood too", () => {
  const check = compileJsonSchema({
    $schema: "http://json-schema.org/draft-07/schema#",
    definitions: { id: { type: "string", pattern: "^ord-" } },
    type: "object",
    properties: { id: { $ref: "#/definitions/id" } },
  });
  expect(ok(check, { id: "ord-1" })).toBe(true);
  expect(check({ id: "x" })[0]?.pointer).toBe("/id");
});

test("a schema that does not compile throws", () => {
  expect(() => compileJsonSchema({ type: "strnig" })).toThrow();
  expect(() => compileJsonSchema({ $ref: "https://example.com/remote.json" })).toThrow();
});
