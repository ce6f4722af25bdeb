// A scripted HTTP server on 127.0.0.1: each request gets the next reply of `script`
// (the last one repeats). A reply is {status, body, headers, delayMs} or 'drop' (the socket
// is destroyed before any response). Requests are recorded with their parsed JSON body.
import { createServer } from 'node:http';

export async function startFakeHttp(script) {
  const requests = [];
  const server = createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString('utf8');
    requests.push({
      method: request.method,
      url: request.url,
      headers: request.headers,
      body: text ? JSON.parse(text) : undefined,
    });
    const reply = script[Math.min(requests.length, script.length) - 1];
    if (reply === 'drop') {
      request.socket.destroy();
      return;
    }
    if (reply.delayMs) await new Promise((wake) => setTimeout(wake, reply.delayMs));
    if (response.destroyed) return;
    response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    response.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  });
  await new Promise((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((done) => server.close(done));
    },
  };
}
