// Which language a response is written in, for IFEval's language:response_language and its
// English-only case checks. IFEval names languages by ISO 639-1 code ("en", "hi"); `franc`
// (trigram statistics, offline) answers in ISO 639-3, hence the table below, which covers every
// language IFEval asks for and a few neighbours. Candidates are limited to the table (roughly the
// languages of the reference's detector): among franc's 187 languages, close relatives such as
// Bhojpuri would otherwise win over Hindi on short texts.
import { franc } from "franc";

const ISO3_TO_ISO1: Record<string, string> = {
  eng: "en",
  spa: "es",
  por: "pt",
  arb: "ar",
  ara: "ar",
  hin: "hi",
  fra: "fr",
  rus: "ru",
  deu: "de",
  jpn: "ja",
  ita: "it",
  ben: "bn",
  ukr: "uk",
  tha: "th",
  urd: "ur",
  tam: "ta",
  tel: "te",
  bul: "bg",
  kor: "ko",
  pol: "pl",
  heb: "he",
  pes: "fa",
  fas: "fa",
  prs: "fa",
  vie: "vi",
  npi: "ne",
  nep: "ne",
  swh: "sw",
  swa: "sw",
  kan: "kn",
  mar: "mr",
  guj: "gu",
  pan: "pa",
  mal: "ml",
  fin: "fi",
  cmn: "zh",
  nld: "nl",
  tur: "tr",
  ces: "cs",
  ron: "ro",
  hun: "hu",
  ell: "el",
  swe: "sv",
  dan: "da",
  nob: "no",
  ind: "id",
  zlm: "ms",
  tgl: "tl",
  cat: "ca",
  slk: "sk",
  hrv: "hr",
  srp: "sr",
  lit: "lt",
  lav: "lv",
  est: "et",
};

const CANDIDATES = Object.keys(ISO3_TO_ISO1);

/** The ISO 639-1 code of the language `text` is written in, or null when it cannot tell. */
export function detectLanguage(text: string): string | null {
  // Trigram statistics are of lower-case text: an all-capitals answer is still English.
  const code = franc(text.toLowerCase(), { minLength: 3, only: CANDIDATES });
  if (code === "und") return null;
  return ISO3_TO_ISO1[code] ?? code;
}
