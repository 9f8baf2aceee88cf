/**
 * Counts the event loop's turns from now until `stop()` (a setImmediate that schedules itself runs
 * once in each turn's check phase): specs tell with `now` in which turn something ran.
 */
export function countTurns(): { readonly now: number; stop(): void } {
  let turns = 0;
  let ticker: NodeJS.Immediate | undefined;
  const tick = () => {
    turns++;
    ticker = setImmediate(tick);
  };
  tick();
  return {
    get now() {
      return turns;
    },
    stop: () => clearImmediate(ticker),
  };
}
