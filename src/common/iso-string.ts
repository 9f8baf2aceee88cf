/** The character codes of 00–99, two a number. */
const DIGIT_PAIRS = Array.from({ length: 100 }, (_, n) => [48 + Math.floor(n / 10), 48 + (n % 10)]).flat();
const DAY_MS = 86_400_000;
const [DASH, T, COLON, DOT, Z] = [45, 84, 58, 46, 90];

/**
 * `date.toISOString()` for the years 1970–9999, three times faster and with one allocation (the
 * string): V8 formats it with snprintf, and the log ingest writes several a line (keys, events,
 * roll-up hours and days, array parameters). Other years, and invalid dates, go to `toISOString`
 * (which throws for an invalid date, as before).
 */
export function isoString(date: Date): string {
  const ms = date.getTime();
  if (!(ms >= 0 && ms < 253_402_300_800_000)) return date.toISOString();
  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  // The civil date of a day count (Howard Hinnant's civil_from_days).
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  const century = Math.floor(year / 100);
  const yy = year - century * 100;
  const d = DIGIT_PAIRS;
  // One argument a character, laid out as the text reads: YYYY-MM-DD T HH:MM:SS .mmm Z.
  // prettier-ignore
  return String.fromCharCode(
    d[2 * century], d[2 * century + 1], d[2 * yy], d[2 * yy + 1], DASH, d[2 * month], d[2 * month + 1], DASH, d[2 * day], d[2 * day + 1],
    T, d[2 * hours], d[2 * hours + 1], COLON, d[2 * minutes], d[2 * minutes + 1], COLON, d[2 * seconds], d[2 * seconds + 1],
    DOT, 48 + Math.floor(millis / 100), 48 + (Math.floor(millis / 10) % 10), 48 + (millis % 10), Z,
  );
}
