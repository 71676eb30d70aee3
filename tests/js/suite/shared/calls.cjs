"use strict";
// The calls every suite makes, through the real npm SDKs, constructed as a suite constructs
// them: from the environment alone (base URL and key), which promptvcr's set-up pointed at
// `promptvcr serve`. Each returns the text the model answered.
const OpenAI = require("openai");
const Anthropic = require("@anthropic-ai/sdk");
const { GoogleGenAI } = require("@google/genai");
const { generateText, streamText } = require("ai");
const { createOpenAI } = require("@ai-sdk/openai");
const WebSocket = require("ws");
const { baseURL, cassetteHeaders } = require("promptvcr");

const openai = new OpenAI({ maxRetries: 0 });
const anthropic = new Anthropic({ maxRetries: 0 });

async function openaiChat(prompt) {
  const answer = await openai.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: prompt }] });
  return answer.choices[0].message.content;
}

async function openaiStream(prompt) {
  const stream = await openai.chat.completions.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: prompt }],
    stream: true,
  });
  const pieces = [];
  for await (const chunk of stream) if (chunk.choices.length) pieces.push(chunk.choices[0].delta.content ?? "");
  if (pieces.length < 3) throw new Error(`a stream of ${pieces.length} events`);
  return pieces.join("");
}

async function anthropicMessage(prompt) {
  const message = await anthropic.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 64,
    messages: [{ role: "user", content: prompt }],
  });
  return message.content[0].text;
}

async function anthropicStream(prompt) {
  const stream = anthropic.messages.stream({
    model: "claude-sonnet-4-5",
    max_tokens: 64,
    messages: [{ role: "user", content: prompt }],
  });
  const pieces = [];
  stream.on("text", (text) => pieces.push(text));
  await stream.finalMessage();
  if (pieces.length < 3) throw new Error(`a stream of ${pieces.length} text events`);
  return pieces.join("");
}

async function geminiStream(prompt) {
  const ai = new GoogleGenAI({ apiKey: process.env.GEMINI_API_KEY, httpOptions: { baseUrl: baseURL("gemini") } });
  const pieces = [];
  for await (const chunk of await ai.models.generateContentStream({ model: "gemini-2.0-flash", contents: prompt })) {
    pieces.push(chunk.text ?? "");
  }
  if (pieces.length < 2) throw new Error(`a stream of ${pieces.length} chunks`);
  return pieces.join("");
}

// @google/genai takes no base URL from the environment: promptvcr's baseURL helper gives it.
async function gemini(prompt) {
  const ai = new GoogleGenAI({ apiKey: process.env.GEMINI_API_KEY, httpOptions: { baseUrl: baseURL("gemini") } });
  const answer = await ai.models.generateContent({ model: "gemini-2.0-flash", contents: prompt });
  return answer.text;
}

// The Vercel AI SDK: one answer whole, then one streamed.
async function vercel(prompt) {
  const model = createOpenAI().chat("gpt-4o-mini");
  const whole = await generateText({ model, prompt, maxRetries: 0 });
  let streamed = "";
  for await (const piece of streamText({ model, prompt: `${prompt} streamed`, maxRetries: 0 }).textStream) streamed += piece;
  return `${whole.text} | ${streamed}`;
}

async function plainFetch(prompt) {
  const answer = await fetch(`${process.env.OPENAI_BASE_URL}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${process.env.OPENAI_API_KEY}` },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: prompt }] }),
  });
  return (await answer.json()).choices[0].message.content;
}

// Code that catches the SDK's error and goes on, as an app with a fallback does.
async function swallowed(prompt) {
  try {
    return await openaiChat(prompt);
  } catch {
    return `fallback for ${prompt}`;
  }
}

// A realtime session over a websocket (the `ws` package; openai's own realtime client forces
// wss://, which `promptvcr serve`, plain HTTP on loopback, does not speak): an upstream of the
// suite's own, `rt` (PROMPTVCR_UPSTREAMS while recording), and the cassette's header given to
// the socket, as it does not go through `fetch`. The event types the server sent, up to
// `response.done`.
async function realtime(instructions) {
  const url = `${baseURL("rt").replace(/^http/, "ws")}/v1/realtime?model=gpt-realtime`;
  const headers = { ...cassetteHeaders(), authorization: `Bearer ${process.env.OPENAI_API_KEY}` };
  const socket = new WebSocket(url, { headers });
  const send = (event) => socket.send(JSON.stringify(event));
  const seen = [];
  await new Promise((resolve, reject) => {
    socket.on("open", () => {
      send({ type: "session.update", session: { type: "realtime", instructions } });
      send({ type: "input_audio_buffer.append", audio: "AAAA".repeat(64) });
      send({ type: "input_audio_buffer.commit" });
      send({ type: "response.create" });
    });
    socket.on("message", (data) => {
      const event = JSON.parse(String(data));
      seen.push(event.type);
      if (event.type === "response.done") socket.close();
    });
    socket.on("error", reject);
    socket.on("close", (code, reason) => {
      if (seen.at(-1) === "response.done") resolve();
      else reject(new Error(`closed ${code}: ${reason}`));
    });
  });
  return seen;
}

module.exports = { anthropicMessage, anthropicStream, gemini, geminiStream, openaiChat, openaiStream, plainFetch, realtime, swallowed, vercel };
