// The personal-data guardrail: e-mail addresses, phone numbers, Luhn-valid card numbers and mod-97-valid IBANs fail
// the output; look-alikes (a handle, an order id, a Luhn-invalid number, a broken IBAN) pass. Reasons name no value.
import { describe, expect, test } from "bun:test";
import {
  containsCardNumber,
  containsIban,
  containsPhoneNumber,
  findPersonalData,
  ibanValid,
  luhnValid,
  personalDataGuardrail,
} from "../../../src/guardrail/index.ts";
import { artifact, reasonOf, textOutput, verdict } from "./fixtures.ts";

const guardrail = personalDataGuardrail();

describe("e-mail addresses", () => {
  test.each([
    "Write to x.y@example.com today.",
    "contact:x.y@example.com",
    "(jane+news@mail.example.org)",
    "mailto:ops@example.co.uk?subject=hi",
  ])("%p fails", async (text) => {
    expect(reasonOf(await verdict(guardrail, text))).toBe("output contains an e-mail address");
  });

  test.each([
    "ping foo@bar when you are back",
    "user@localhost is not routable",
    "install pkg@1.2.3",
    "an @ alone, and @handle",
  ])("%p passes (no domain with a dot and a letter TLD)", async (text) => {
    expect(await verdict(guardrail, text)).toEqual({ pass: true });
  });
});

describe("phone numbers", () => {
  test.each([
    "+44 20 7946 0958",
    "Call +31 6 12345678!",
    "+44 (0)20 7946 0958",
    "0044 20 7946 0958",
    "(555) 123-4567",
    "555-123-4567",
    "phone: 555.123.4567",
    "020 7946 0958",
    "06-12345678",
    "0612345678",
    "+1 555 123 4567 ext",
    "+44 20 7946 0958 1234", // a run that goes on past the number
    "06.12.34.56.78",
  ])("%p is a phone number", (text) => {
    expect(containsPhoneNumber(text)).toBe(true);
  });

  test.each([
    "order 123456789012",
    "ts 1718000000123",
    "1 234 567 890 people",
    "pi is 3.14159265358",
    "0.123456789",
    "host 192.168.100.200",
    "released 2024-01-15 at 10:30",
    "on 05.03.2024 14:00",
    "06/12/2024 10:30",
    "+12345",
    "0 1 2 3 4 5 6 7 8 9",
    "v0612345678b",
  ])("%p is not a phone number", (text) => {
    expect(containsPhoneNumber(text)).toBe(false);
  });

  test("the guardrail fails on a phone number and passes an order id", async () => {
    expect(reasonOf(await verdict(guardrail, "Reach me at +49 30 1234567."))).toBe("output contains a phone number");
    expect(await verdict(guardrail, "Your order 123456789012 has shipped.")).toEqual({ pass: true });
  });
});

describe("payment card numbers", () => {
  test("the Luhn check", () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    expect(luhnValid("79927398713")).toBe(true);
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(luhnValid("79927398710")).toBe(false);
    expect(luhnValid("")).toBe(false);
  });

  test.each([
    "card 4111111111111111",
    "4111 1111 1111 1111",
    "4111-1111-1111-1111",
    "5555 5555 5555 4444 exp 12/30",
    "amex 378282246310005",
    "3782-822463-10005",
    "4111 1111 1111 1111 12", // a trailing group does not hide the number
  ])("%p is a Luhn-valid card number", (text) => {
    expect(containsCardNumber(text)).toBe(true);
  });

  test.each([
    "4111111111111112", // Luhn-invalid
    "4111 1111 1111 1112",
    "411111111111", // 12 digits: too short
    "41111111111111111111", // 20 digits: too long
    "0000000000000000", // Luhn-valid, but 0 is no card network
    "1234567812345670", // Luhn-valid, but 1 is no card network
    "4 111 111 111 111 111", // grouped in thousands
    "x4111111111111111",
  ])("%p is not a card number", (text) => {
    expect(containsCardNumber(text)).toBe(false);
  });

  test("the guardrail fails on a Luhn-valid number and passes a Luhn-invalid one", async () => {
    const failed = await verdict(guardrail, "Pay with 4111 1111 1111 1111 please");
    expect(reasonOf(failed)).toBe("output contains a payment card number");
    expect(reasonOf(failed)).not.toContain("4111");
    expect(await verdict(guardrail, "Reference 4111 1111 1111 1112 please")).toEqual({ pass: true });
  });
});

describe("IBANs", () => {
  test("the mod-97 check", () => {
    expect(ibanValid("DE89370400440532013000")).toBe(true);
    expect(ibanValid("GB82WEST12345698765432")).toBe(true);
    expect(ibanValid("DE89370400440532013001")).toBe(false);
    expect(ibanValid("de89370400440532013000")).toBe(false);
    expect(ibanValid("DE8937040044")).toBe(false);
  });

  test.each([
    "IBAN DE89 3704 0044 0532 0130 00.",
    "DE89370400440532013000",
    "GB82 WEST 1234 5698 7654 32",
    "DE89 3704 0044 0532 0130 00 OK",
  ])("%p holds a valid IBAN", (text) => {
    expect(containsIban(text)).toBe(true);
  });

  test.each([
    "DE89 3704 0044 0532 0130 01",
    "DE89370400440532013001",
    "XDE89370400440532013000",
    "DE89370400440532013000abc",
  ])("%p holds no valid IBAN", (text) => {
    expect(containsIban(text)).toBe(false);
  });

  test("the guardrail fails on a valid IBAN and passes an invalid one", async () => {
    expect(reasonOf(await verdict(guardrail, "Transfer to DE89 3704 0044 0532 0130 00"))).toBe(
      "output contains an IBAN",
    );
    expect(await verdict(guardrail, "Transfer to DE89 3704 0044 0532 0130 01")).toEqual({ pass: true });
  });
});

describe("where the guardrail looks", () => {
  test("text parts, URLs and data parts of artifacts are read", async () => {
    const inText = textOutput("", artifact({ text: "mail x.y@example.com" }));
    const inUrl = textOutput("", artifact({ url: "https://example.com/?to=x.y@example.com" }));
    const inData = textOutput("", artifact({ data: { customer: { phone: "+31612345678" } } }));
    expect(reasonOf(await verdict(guardrail, inText))).toBe("output contains an e-mail address");
    expect(reasonOf(await verdict(guardrail, inUrl))).toBe("output contains an e-mail address");
    expect(reasonOf(await verdict(guardrail, inData))).toBe("output contains a phone number");
  });

  test("clean output passes", async () => {
    const output = textOutput("Your order ships on 2024-01-15.", artifact({ data: { orderId: 123456789012 } }));
    expect(await verdict(guardrail, output)).toEqual({ pass: true });
    expect(findPersonalData("nothing personal here")).toBeUndefined();
  });

  test.each([
    ["words and numbers", "word 12345 0.5 a@b ".repeat(50_000)],
    ["one long run of digit groups", `${"1234 ".repeat(200_000)}x`],
    ["one long run of tiny groups", "1-".repeat(300_000)],
    ["one long word", "ab".repeat(500_000)],
  ])("a megabyte of %s without personal data is scanned in under 1.5 s", (_name, text) => {
    const started = performance.now();
    expect(findPersonalData(text)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1500);
  });
});
