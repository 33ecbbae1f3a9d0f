// Finds payment card numbers (Luhn check) and IBANs (ISO 13616 mod-97 check) in text, for the personal-data guardrail.
// Pure string work: no I/O. The check digits keep plain long numbers from counting unless they happen to pass.

/**
 * Digit groups joined by single spaces or single dashes, starting outside any word. Its end is checked in code, not by
 * a look-ahead, which would make the engine keep a backtrack point per group.
 */
const DIGIT_RUN = /(?<![\p{L}\p{N}\p{M}_])\d+(?:[ -]\d+)*/gu;
const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u;
/** Two capital letters, two check digits, then capitals and digits, optionally in space-separated groups. */
const IBAN_RUN = /(?<![\p{L}\p{N}\p{M}_])[A-Z]{2}\d{2}[A-Z0-9]*(?: [A-Z0-9]+)*/gu;

const CARD_MIN_DIGITS = 13;
const CARD_MAX_DIGITS = 19;
const IBAN_MIN_LENGTH = 15;
const IBAN_MAX_LENGTH = 34;

/** The Luhn (mod 10) check over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index += 1) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (digit < 0 || digit > 9) return false;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** A payment card number: 13–19 digits, a major industry digit of 2–6 (banking and card networks), Luhn-valid. */
function isCardNumber(digits: string): boolean {
  return (
    digits.length >= CARD_MIN_DIGITS && digits.length <= CARD_MAX_DIGITS && /^[2-6]/.test(digits) && luhnValid(digits)
  );
}

/**
 * Whether `text` holds a payment card number: 13–19 digits starting with 2–6 that pass the Luhn check, written plain
 * ("4111111111111111") or in groups joined by one space or one dash ("4111 1111 1111 1111", "3782-822463-10005").
 * A grouped number counts from a group of four digits on, each later group holding 3–6 digits, all joined by the same
 * separator; so a number grouped in thousands ("4 111 111 111 111 111") does not count.
 */
export function containsCardNumber(text: string): boolean {
  for (const match of text.matchAll(DIGIT_RUN)) {
    const pieces = match[0].split(/([ -])/);
    // A last group glued to a word ("…1111abc") is part of that word, not of the number.
    if (WORD_CHAR.test(text.charAt(match.index + match[0].length))) pieces.splice(-2);
    if (pieces.length === 1 ? isCardNumber(pieces[0] ?? "") : groupedCardNumber(pieces)) return true;
  }
  return false;
}

/** `pieces` alternates groups and separators: [group, sep, group, sep, group, ...]. */
function groupedCardNumber(pieces: readonly string[]): boolean {
  for (let first = 0; first < pieces.length; first += 2) {
    if (pieces[first]?.length !== 4) continue;
    const separator = pieces[first + 1];
    let digits = pieces[first] ?? "";
    for (let next = first + 2; next < pieces.length; next += 2) {
      const group = pieces[next] ?? "";
      if (pieces[next - 1] !== separator || group.length < 3 || group.length > 6) break;
      digits += group;
      if (digits.length > CARD_MAX_DIGITS) break;
      if (isCardNumber(digits)) return true;
    }
  }
  return false;
}

/** The ISO 13616 check of a compact IBAN (capitals and digits, no spaces): the rearranged number mod 97 is 1. */
export function ibanValid(compact: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(compact)) return false;
  if (compact.length < IBAN_MIN_LENGTH || compact.length > IBAN_MAX_LENGTH) return false;
  let remainder = 0;
  for (const char of compact.slice(4) + compact.slice(0, 4)) {
    const value = Number.parseInt(char, 36); // 0-9 → 0-9, A-Z → 10-35
    remainder = (value < 10 ? remainder * 10 + value : remainder * 100 + value) % 97;
  }
  return remainder === 1;
}

/**
 * Whether `text` holds an IBAN: a country code, two check digits and 11–30 capitals or digits that pass the mod-97
 * check, written compact ("DE89370400440532013000") or in space-separated groups ("DE89 3704 0044 0532 0130 00").
 * A trailing word in capitals ("… 0130 00 OK") is tried both with and without. Lower-case IBANs are not read.
 */
export function containsIban(text: string): boolean {
  for (const match of text.matchAll(IBAN_RUN)) {
    const groups = match[0].split(" ");
    const glued = WORD_CHAR.test(text.charAt(match.index + match[0].length));
    let compact = "";
    for (let count = 1; count <= groups.length; count += 1) {
      compact += groups[count - 1] ?? "";
      if (compact.length > IBAN_MAX_LENGTH) break;
      const endsAWord = count < groups.length || !glued;
      if (endsAWord && ibanValid(compact)) return true;
    }
  }
  return false;
}
