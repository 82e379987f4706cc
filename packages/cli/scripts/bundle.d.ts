export declare const BUNDLE: string;
/** The bundle's entry, as a process test or an operator runs it. */
export declare const ENTRY: string;
/** Into `target` (default packages/cli/bundle; scripts/pack.ts bundles into its staging directory). */
export declare const bundle: (target?: string) => Promise<string>;
