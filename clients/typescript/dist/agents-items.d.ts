/** An item in either protocol, as plain JSON. */
type Json = Record<string, any>;
/** One Agents SDK item as the Responses input item Foldwise takes. */
export declare function toResponsesItem(item: Json): Json;
/** Responses input items (a context, a popped message) as Agents SDK items, in order. */
export declare function fromResponsesItems(items: Json[]): Json[];
/**
 * An Agents SDK item reduced to what it says: the fields Foldwise keeps, without the ones it
 * adds or normalizes (`id`, `status`, `providerData`, a string `content` given as parts).
 */
export declare function comparable(item: Json): Json;
export {};
