#!/usr/bin/env python3
"""test/smtp_sink.py - a local SMTP server for the tests that keeps every
message it is given, one file each:

    python3 test/smtp_sink.py DIR PORT_FILE

listens on 127.0.0.1 at a free port, writes the port to PORT_FILE once it
listens, and saves each message (RFC 5321's DATA, dot-unstuffed, CRLF
kept) as DIR/NNN.eml (written to a temporary name and renamed, so a file
that is there is whole), with the envelope in DIR/NNN.env ("MAIL FROM:..."
and "RCPT TO:..." lines). Speaks just enough SMTP for a client such as
libcurl: EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT; offers no
STARTTLS or AUTH. Runs until killed. Only the standard library (no smtpd,
gone from Python 3.12).
"""
import os
import socketserver
import sys
import threading

MAX_MESSAGE = 1 << 20

counter = 0
counter_lock = threading.Lock()


def save(outdir, envelope, data):
    global counter
    with counter_lock:
        counter += 1
        n = counter
    base = os.path.join(outdir, '%03d' % n)
    with open(base + '.env', 'w') as f:
        f.write('\n'.join(envelope) + '\n')
    with open(base + '.tmp', 'wb') as f:
        f.write(data)
    os.rename(base + '.tmp', base + '.eml')


class Session(socketserver.StreamRequestHandler):
    def reply(self, line):
        self.wfile.write(line.encode() + b'\r\n')
        self.wfile.flush()

    def read_data(self):
        lines = []
        size = 0
        while True:
            line = self.rfile.readline(MAX_MESSAGE)
            if not line:
                return None
            if line in (b'.\r\n', b'.\n'):
                return b''.join(lines)
            if line.startswith(b'.'):
                line = line[1:]
            size += len(line)
            if size > MAX_MESSAGE:
                return None
            lines.append(line)

    def handle(self):
        envelope = []
        self.reply('220 127.0.0.1 ctune test sink')
        while True:
            raw = self.rfile.readline(4096)
            if not raw:
                return
            line = raw.decode('utf-8', 'replace').rstrip('\r\n')
            verb = line[:4].upper()
            if verb == 'EHLO':
                self.reply('250-127.0.0.1')
                self.reply('250-8BITMIME')
                self.reply('250 SIZE %d' % MAX_MESSAGE)
            elif verb == 'HELO':
                self.reply('250 127.0.0.1')
            elif verb == 'MAIL':
                envelope = [line]
                self.reply('250 OK')
            elif verb == 'RCPT':
                envelope.append(line)
                self.reply('250 OK')
            elif verb == 'DATA':
                if len(envelope) < 2:
                    self.reply('503 need MAIL and RCPT first')
                    continue
                self.reply('354 go on, end with a lone dot')
                data = self.read_data()
                if data is None:
                    self.reply('552 too big or cut off')
                    return
                save(self.server.outdir, envelope, data)
                envelope = []
                self.reply('250 OK kept')
            elif verb == 'RSET':
                envelope = []
                self.reply('250 OK')
            elif verb == 'NOOP':
                self.reply('250 OK')
            elif verb == 'QUIT':
                self.reply('221 bye')
                return
            else:
                self.reply('502 not here')


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: smtp_sink.py DIR PORT_FILE')
    outdir, port_file = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    srv = Server(('127.0.0.1', 0), Session)
    srv.outdir = outdir
    with open(port_file + '.tmp', 'w') as f:
        f.write('%d\n' % srv.server_address[1])
    os.rename(port_file + '.tmp', port_file)
    srv.serve_forever()


if __name__ == '__main__':
    main()
