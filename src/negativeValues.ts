// A leaf module shared by the command line's parsers (serve, devnet, the client commands): node's
// parseArgs refuses `--start-block -1` as "ambiguous" (the value looks like a flag), which tells the user
// nothing about the flag. A negative number after a flag that takes a value is that flag's value, so the
// flag's own check answers (`--start-block must be at least 0`), and `--vector -0.5,1` just works.

const NEGATIVE_NUMBER = /^-\.?\d/;

/** The parseArgs options this reads: which flags take a value, and their one-letter forms. */
type ValueFlags = Readonly<Record<string, { readonly type: 'string' | 'boolean'; readonly short?: string }>>;

/**
 * `--flag -1` becomes `--flag=-1` and `-k -1` becomes `-k-1` where the flag takes a value; everything
 * else (and everything after `--`) is left as it is.
 * @param args the command line
 * @param options the parser's options
 * @example withNegativeValues(['--start-block', '-1'], { 'start-block': { type: 'string' } }) // ['--start-block=-1']
 */
export function withNegativeValues(args: readonly string[], options: ValueFlags): string[] {
  const takesValue = new Set<string>();
  for (const [name, option] of Object.entries(options))
    if (option.type === 'string') {
      takesValue.add(`--${name}`);
      if (option.short) takesValue.add(`-${option.short}`);
    }
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    const next = args[i + 1];
    if (takesValue.has(arg) && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      out.push(arg.startsWith('--') ? `${arg}=${next}` : `${arg}${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}
