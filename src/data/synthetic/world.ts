// A small made-up world the tiny model can memorise completely: a few creatures and towns with
// fixed attributes. Questions about it have exactly one right answer, which makes the chats
// usable for supervised-learning tests (the test NLL really can go down) without real data.

export interface Creature {
  name: string;
  color: string;
  food: string;
  home: string;
  sound: string;
}

export interface Town {
  name: string;
  mayor: string;
  river: string;
  knownFor: string;
}

export const CREATURES: readonly Creature[] = [
  { name: "glimmerfox", color: "blue", food: "moonberries", home: "the Silver Woods", sound: "chime" },
  { name: "puddlebug", color: "green", food: "rain drops", home: "the Marsh of Ooze", sound: "plip" },
  { name: "stonehorn", color: "grey", food: "pebbles", home: "the Tall Hills", sound: "rumble" },
  { name: "sunfinch", color: "yellow", food: "seeds", home: "the Golden Fields", sound: "tweet" },
  { name: "mossbear", color: "brown", food: "honey moss", home: "the Deep Forest", sound: "grumble" },
  { name: "frostwing", color: "white", food: "snowflakes", home: "the Ice Peaks", sound: "whistle" },
  { name: "emberling", color: "red", food: "warm coal", home: "the Fire Caves", sound: "crackle" },
  { name: "dusktoad", color: "purple", food: "night moths", home: "the Shadow Pond", sound: "croak" },
  { name: "reedcat", color: "orange", food: "river fish", home: "the Reed Banks", sound: "purr" },
  { name: "cloudsheep", color: "pink", food: "sky grass", home: "the Cloud Meadow", sound: "baa" },
  { name: "tidecrab", color: "teal", food: "sea salt", home: "the Bright Coast", sound: "click" },
  { name: "thornpig", color: "black", food: "acorns", home: "the Bramble Patch", sound: "snort" },
];

export const TOWNS: readonly Town[] = [
  { name: "Pellow", mayor: "Tamsin", river: "the Pell", knownFor: "blue bread" },
  { name: "Ardmoor", mayor: "Bram", river: "the Ard", knownFor: "stone bridges" },
  { name: "Quillby", mayor: "Odessa", river: "the Quill", knownFor: "paper kites" },
  { name: "Mirefield", mayor: "Corwin", river: "the Mire", knownFor: "giant pumpkins" },
  { name: "Luthen", mayor: "Ysolde", river: "the Lute", knownFor: "music boxes" },
  { name: "Varrow", mayor: "Dunstan", river: "the Varr", knownFor: "copper bells" },
  { name: "Ostrel", mayor: "Mirela", river: "the Ost", knownFor: "glass lanterns" },
  { name: "Tindle", mayor: "Fenwick", river: "the Tind", knownFor: "apple cider" },
];

export const WORLD_NAME = "Zorbia";

export const ASSISTANT_NAME = "Tiny";

/** Words for the simple "repeat", "spell" and "plural" style tasks. */
export const COMMON_WORDS: readonly string[] = [
  "apple",
  "river",
  "cloud",
  "stone",
  "green",
  "happy",
  "table",
  "light",
  "music",
  "bread",
  "house",
  "water",
  "tiger",
  "lemon",
  "chair",
  "smile",
  "ocean",
  "paper",
  "sugar",
  "candle",
  "garden",
  "winter",
  "summer",
  "window",
  "yellow",
  "pencil",
  "rocket",
  "forest",
  "basket",
  "silver",
];
