/** An item in either protocol, as plain JSON. */
type Json = Record<string, any>;
/** One Agents SDK item as the Responses input item Foldwise takes. */
export declare function toResponsesItem(item: Json): Json;
/** Responses input items (a context, a popped message) as Agents SDK items, in order. */
export declare function fromResponsesItems(items: Json[]): Json[];
export {};
