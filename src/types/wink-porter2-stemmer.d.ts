/** Types for wink-porter2-stemmer (it ships none): the Porter2 stem of one lower-case English word. */
declare module 'wink-porter2-stemmer' {
  export default function stem(word: string): string;
}
