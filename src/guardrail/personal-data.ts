// The personal-data guardrail: refuses output holding an e-mail address, a phone number, a payment card number or an
// IBAN. Its reason names the kind found, never the value (the log must not become a copy of the personal data).
import { fail, type Guardrail, guardedText, PASS } from "./guardrail.ts";
import { containsCardNumber, containsIban } from "./payment-numbers.ts";
import { containsPhoneNumber } from "./phone-numbers.ts";

/**
 * local@domain.tld: a local part, "@", then domain labels with at least one dot and a top-level label of two or more
 * letters. "x.y@example.com" counts wherever it stands; "foo@bar" (no dot in the domain) and "v@1.2" do not.
 * The look-behind makes the scan start only at the beginning of a local part, which keeps it linear.
 */
const EMAIL = /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/u;

export const PERSONAL_DATA_KINDS = ["an e-mail address", "a payment card number", "an IBAN", "a phone number"] as const;
export type PersonalDataKind = (typeof PERSONAL_DATA_KINDS)[number];

const DETECTORS: ReadonlyArray<readonly [PersonalDataKind, (text: string) => boolean]> = [
  ["an e-mail address", (text) => EMAIL.test(text)],
  ["a payment card number", containsCardNumber],
  ["an IBAN", containsIban],
  ["a phone number", containsPhoneNumber],
];

/** The first kind of personal data found in `text`, or undefined when there is none. */
export function findPersonalData(text: string): PersonalDataKind | undefined {
  for (const [kind, detect] of DETECTORS) if (detect(text)) return kind;
  return undefined;
}

/** Refuses output whose text (see guardedText: text parts, URLs and the JSON of data parts) holds personal data. */
export function personalDataGuardrail(): Guardrail {
  return {
    name: "personal-data",
    check: async (output) => {
      const kind = findPersonalData(guardedText(output));
      return kind === undefined ? PASS : fail(`output contains ${kind}`);
    },
  };
}
