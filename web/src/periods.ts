// The timeline's periods as the web app reads them from its address (the Files page's `period`).

/** A local date in the browser's zone, for any year (the Date constructor takes 0–99 as 19xx). */
const localDate = (year: number, monthIndex: number, day: number) => {
  const date = new Date(2000, 0, 1);
  date.setFullYear(year, monthIndex, day);
  return date;
};

/**
 * The instants a timeline period's key (`YYYY-MM`, `YYYY-Www`, `YYYY`) spans in the browser's zone,
 * which is the zone the timeline is asked in, so they are its bucket's `from` and `to`. Null for a
 * key that is not a period of the grouping, so an address from another grouping chooses nothing.
 */
export function periodRange(key: string, groupBy: 'month' | 'week' | 'year'): { from: number; to: number } | null {
  const month = groupBy === 'month' && /^(\d{4})-(0[1-9]|1[0-2])$/.exec(key);
  if (month) return { from: localDate(Number(month[1]), Number(month[2]) - 1, 1).getTime(), to: localDate(Number(month[1]), Number(month[2]), 1).getTime() };
  const year = groupBy === 'year' && /^(\d{4})$/.exec(key);
  if (year) return { from: localDate(Number(year[1]), 0, 1).getTime(), to: localDate(Number(year[1]) + 1, 0, 1).getTime() };
  const week = groupBy === 'week' && /^(\d{4})-W(\d{2})$/.exec(key);
  if (!week) return null;
  const [weekYear, number] = [Number(week[1]), Number(week[2])];
  // A year has 52 or 53 weeks: the week asked must begin before the next year's week 1.
  const start = weekOneMonday(weekYear) + (number - 1) * 7;
  if (number < 1 || localDate(weekYear, 0, start) >= localDate(weekYear + 1, 0, weekOneMonday(weekYear + 1))) return null;
  return { from: localDate(weekYear, 0, start).getTime(), to: localDate(weekYear, 0, start + 7).getTime() };
}

/** ISO 8601: week 1 is the week of 4 January, weeks beginning on Monday; its Monday as a day of January (0 or less: in December). */
function weekOneMonday(year: number): number {
  return 4 - ((localDate(year, 0, 4).getDay() + 6) % 7);
}
