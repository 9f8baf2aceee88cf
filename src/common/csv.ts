/** A CSV cell: quoted when needed, and a leading = + - @ (or tab, CR) defused so spreadsheets do not run it. */
export function csvCell(value: string): string {
  const defused = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\n\r]/.test(defused) ? `"${defused.replace(/"/g, '""')}"` : defused;
}

/** One CSV line (with its newline) of the cells given. */
export const csvLine = (cells: string[]): string => `${cells.map(csvCell).join(',')}\n`;
