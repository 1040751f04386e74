/**
 * Questions written for this benchmark over the sessions of the development conversations
 * (by conversation file name and dialogue ids), in words of our own: read from the turns,
 * not from the set's questions or answers. They are a third fold beside the two
 * conversations' own questions: a change that only helps the set's phrasing shows here.
 * Categories follow LoCoMo's numbering (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop).
 */
import type { Question } from './locomo.js';

type Own = Question & { conversation: string };

function own(conversation: string, category: number, question: string, ...evidence: string[]): Own {
  return { conversation, category, question, evidence };
}

export const paraphrases: Own[] = [
  own('26', 4, 'Why did Caroline pick those adoption agencies?', 'D2:12'),
  own('26', 4, 'What did Caroline speak to the students about at the school?', 'D3:1'),
  own('26', 2, 'When did Caroline give a talk at a school?', 'D3:1'),
  own('26', 4, 'How many years ago did Melanie first wear the dress in her photo?', 'D3:16'),
  own('26', 4, 'Who made the painted bowl Caroline keeps, and for which occasion?', 'D4:5'),
  own('26', 4, "What did Melanie's family do around the campfire?", 'D4:8'),
  own('26', 4, 'Which line of work has Caroline been considering lately?', 'D4:11'),
  own('26', 4, "What part does clay play in Melanie's life?", 'D5:10'),
  own('26', 2, 'Which gathering was Caroline planning to attend in July 2023?', 'D5:13'),
  own('26', 4, "What sorts of children's books does Caroline have?", 'D6:9'),
  own('26', 4, 'Who helped Caroline through her transition?', 'D6:15'),
  own('26', 4, 'Where did Melanie and her family go on their second camping trip?', 'D8:32'),
  own('26', 2, 'When did Caroline join a mentoring scheme for young LGBTQ people?', 'D9:2'),
  own('26', 4, 'Which visit led Caroline to paint a picture about unity?', 'D9:16'),
  own('26', 4, 'What animal does Caroline keep, and what is its name?', 'D13:3'),
  own('26', 2, 'In which month is Caroline holding her art exhibition?', 'D14:33'),
  own('26', 4, 'Which composers does Melanie listen to?', 'D15:28'),
  own('26', 4, "What happened to Melanie's boy on the road trip?", 'D18:1', 'D18:2'),
  own('26', 4, 'Who does Caroline lean on for strength?', 'D3:11'),
  own('26', 3, 'Does Caroline think the fight for LGBTQ rights is over?', 'D7:3'),
  own('26', 1, 'Which crafts does Melanie practise?', 'D5:10', 'D16:8'),
  own('26', 1, 'What creative things has Melanie done with her children?', 'D8:4', 'D8:6'),
  own('26', 1, 'In what ways has Caroline supported young LGBTQ people?', 'D3:1', 'D9:2'),
  // Naming both speakers, written over turns drawn at random (a seeded draw, not chosen).
  own('26', 4, 'What did Melanie tell Caroline about her family after the accident?', 'D18:5'),
  own('26', 4, 'What did Melanie say to Caroline about pets?', 'D7:14'),
  own('26', 4, 'What kind of drawing does Caroline tell Melanie she likes?', 'D14:29'),
  own('26', 4, 'Which singer did Melanie tell Caroline about?', 'D11:3'),
  own('26', 4, 'What event with her paintings did Caroline announce to Melanie?', 'D9:12'),
  own('26', 4, "What did Caroline like in Melanie's photo of the leaves?", 'D16:3'),
  own('30', 4, "Which styles does Jon's dance group perform?", 'D1:24'),
  own('30', 2, "When was Jon's group due to perform at a festival?", 'D1:24'),
  own('30', 4, 'What did Gina start to grow her shop?', 'D2:1'),
  own('30', 4, 'Which city did Jon visit while looking for a studio?', 'D2:4', 'D2:5'),
  own('30', 4, 'Which Italian city has Gina been to?', 'D2:5'),
  own('30', 4, 'What kind of floor does Jon want in his studio?', 'D2:8'),
  own('30', 4, 'What was Jon doing for a living before dancing?', 'D5:10'),
  own('30', 4, "What does Gina's tattoo mean to her?", 'D5:15'),
  own('30', 1, 'Why did Gina get inked?', 'D5:13', 'D5:15'),
  own('30', 4, 'How is Gina building the image of her shop?', 'D7:6'),
  own('30', 4, 'How is Jon promoting his studio?', 'D8:13'),
  own('30', 2, 'When is Jon holding a dance contest?', 'D8:13'),
  own('30', 2, 'When did Gina open her internet clothing shop?', 'D10:2'),
  own('30', 4, 'Why did Gina want to be her own boss?', 'D10:4'),
  own('30', 4, 'What has Jon been struggling with in running his business?', 'D10:7'),
  own('30', 2, 'What did Gina get accepted for in May 2023?', 'D12:1'),
  own('30', 1, 'How is Jon trying to pay for his studio?', 'D12:12', 'D18:2'),
  own('30', 4, 'What helps Jon keep his goals in view?', 'D13:13'),
  own('30', 2, 'When did Jon meet the business mentor?', 'D14:1'),
  own('30', 4, 'How is Jon covering costs while the studio struggles?', 'D18:2'),
  own('30', 3, 'Did Gina learn dancing on her own?', 'D13:8'),
  own('30', 4, 'What slogan does Gina keep repeating to Jon?', 'D19:2'),
  // Naming both speakers, written over turns drawn at random (a seeded draw, not chosen).
  own('30', 4, 'What did Jon tell Gina about losing his job?', 'D16:8'),
  own('30', 4, "How does Gina describe Jon's studio beyond a business?", 'D13:6'),
  own('30', 4, 'Which event did Jon invite Gina to?', 'D8:15'),
  own('30', 4, 'What does Jon say keeps his mind focused, in his chat with Gina?', 'D11:17'),
  own('30', 4, "What did Gina predict about Jon's competition?", 'D4:14'),
  own('30', 4, 'What did Jon promise Gina he would not do?', 'D19:11'),
  own('30', 4, 'What did Gina say Jon earned the kudos for?', 'D9:12'),
];
