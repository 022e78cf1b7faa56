// Drives genloop serve with the official OpenAI Node client, as an application would:
//   npm install openai@4 && node openai_check.mjs [PORT] [API_KEY]
// (a server started with: genloop serve --port PORT [--api-key API_KEY])
import OpenAI from "openai";
const port = process.argv[2] || "8080";
const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: process.argv[3] || "unused" });
const models = await client.models.list();
console.log("models:", models.data.map(m => m.id).join(","));
const r = await client.completions.create({ model: models.data[0].id, prompt: "Once upon a time", max_tokens: 20, seed: 1, temperature: 0 });
console.log("completion:", JSON.stringify(r.choices[0].text), r.choices[0].finish_reason, JSON.stringify(r.usage));
let text = "";
const s = await client.chat.completions.create({ model: models.data[0].id, stream: true, max_tokens: 24, seed: 3,
  messages: [{ role: "user", content: "Tell me a story" }] });
let n = 0, fin = null;
for await (const chunk of s) { n++; text += chunk.choices[0]?.delta?.content || ""; fin = chunk.choices[0]?.finish_reason || fin; }
console.log("chat stream:", n, "chunks,", JSON.stringify(text), fin);
const c = await client.chat.completions.create({ model: models.data[0].id, max_tokens: 10, seed: 3,
  messages: [{ role: "user", content: "Tell me a story" }] });
console.log("chat:", JSON.stringify(c.choices[0].message), JSON.stringify(c.usage));
try { await client.completions.create({ model: "nope", prompt: "x" }); } catch (e) { console.log("error path:", e.status, e.error?.type, e.error?.code); }
const s2 = await client.completions.create({ model: models.data[0].id, prompt: "Once upon a time", max_tokens: 20, seed: 1, temperature: 0, stream: true });
let t2 = ""; for await (const ch of s2) t2 += ch.choices[0]?.text || "";
console.log("completion stream equals non-stream:", t2 === r.choices[0].text);
