package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
)

// Why the engine streams: a model served on a CPU may take minutes to
// answer, and the request's time limit then ends it. A whole answer that
// did not arrive in time is lost, and a server such as llama-cpp-python's
// goes on writing it for nobody, keeping the next request waiting. A
// streamed answer that the time limit cuts still holds the findings the
// model completed before the cut, and closing the stream stops the server
// generating.

// errInterrupted: the server ended the stream ([DONE]) before the
// answer's finish reason. llama-cpp-python's server does so to a stream
// whenever another request arrives (its interrupt_requests setting, on by
// default), which the engine's concurrent requests always do; such a
// server is asked for whole answers from then on. A server that still
// streams, and interrupts, when asked for a whole answer has ended it
// early.
var errInterrupted = fmt.Errorf("%w: the server interrupted the answer's stream", errEndedEarly)

// errStopped: the answer was still streaming when the request's or the
// review's time limit came. The text so far goes with it, so that the
// findings complete before the limit are kept.
var errStopped = errors.New("answer still streaming at the time limit")

// streamOptions asks for the usage chunk at the end of a stream (OpenAI,
// vLLM, Ollama); servers that do not know it ignore it.
type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatChunk is one event of a streamed chat completion, as far as the
// engine reads it.
type chatChunk struct {
	Choices []struct {
		Delta struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage                    `json:"usage"`
	Error *struct{ Message string } `json:"error"`
}

// isEventStream reports whether a response is server-sent events: a
// server that does not stream answers the whole completion as JSON, which
// is read as such.
func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/event-stream"
}

// maxEventSize bounds one event's data: a chunk carries a few tokens.
const maxEventSize = 1 << 20

// readStream reads a streamed chat completion into the completion it adds
// up to. It reads at most maxResponseSize bytes. When the stream ends
// early (the time limit, a dropped connection), it returns the answer so
// far with the read's error; complete says whether it ended.
// Text of the server's own (an error event's message) passes through clip.
func readStream(body io.Reader, clip func(string) string) (r chatResponse, complete bool, err error) {
	var content, refusal strings.Builder
	var finish string
	var sawContent bool
	br := bufio.NewReaderSize(io.LimitReader(body, maxResponseSize+1), 64<<10)
	var data bytes.Buffer
	read := 0
	result := func() chatResponse {
		r.Choices = make([]choice, 1)
		ch := &r.Choices[0]
		ch.FinishReason = finish
		if sawContent {
			s := content.String()
			ch.Message.Content = &s
		}
		if refusal.Len() > 0 {
			s := refusal.String()
			ch.Message.Refusal = &s
		}
		return r
	}
	// event handles one event's data; done says the stream is over.
	event := func(d []byte) (done bool, err error) {
		if bytes.Equal(bytes.TrimSpace(d), []byte("[DONE]")) {
			if finish == "" {
				return true, errInterrupted
			}
			return true, nil
		}
		var c chatChunk
		if err := json.Unmarshal(d, &c); err != nil {
			return false, fmt.Errorf("%w: a stream event is not a chat completion chunk: %v", ErrMalformed, err)
		}
		if c.Error != nil {
			return false, fmt.Errorf("%w: the stream ended with an error: %s", ErrNoChoices, clip(c.Error.Message))
		}
		if c.Usage != nil {
			r.Usage = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				sawContent = true
				content.WriteString(*ch.Delta.Content)
			}
			if ch.Delta.Refusal != nil {
				refusal.WriteString(*ch.Delta.Refusal)
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				finish = *ch.FinishReason
			}
		}
		return false, nil
	}
	// long is a line longer than the reader's buffer, read in pieces:
	// it is taken whole, since a piece may start with anything.
	var long []byte
	first := true
	for {
		piece, lerr := br.ReadSlice('\n')
		read += len(piece)
		if read > maxResponseSize {
			return result(), false, fmt.Errorf("%w: a stream larger than %d bytes", ErrMalformed, maxResponseSize)
		}
		if errors.Is(lerr, bufio.ErrBufferFull) {
			if len(long)+len(piece) > maxEventSize+len("data: \r\n") {
				return result(), false, fmt.Errorf("%w: a stream line larger than %d bytes", ErrMalformed, maxEventSize)
			}
			long = append(long, piece...)
			continue
		}
		line := piece
		if len(long) > 0 {
			long = append(long, piece...)
			line, long = long, long[:0]
		}
		if first {
			// The format allows a byte order mark before the first line.
			line, first = bytes.TrimPrefix(line, []byte("\ufeff")), false
		}
		trimmed := bytes.TrimRight(line, "\r\n")
		switch {
		case len(trimmed) == 0 && len(line) > 0:
			// A blank line ends an event.
			if data.Len() > 0 {
				done, err := event(data.Bytes())
				data.Reset()
				if err != nil {
					return result(), false, err
				}
				if done {
					return result(), true, nil
				}
			}
		case bytes.HasPrefix(trimmed, []byte("data:")):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			if data.Len()+len(trimmed) > maxEventSize {
				return result(), false, fmt.Errorf("%w: a stream event larger than %d bytes", ErrMalformed, maxEventSize)
			}
			data.Write(bytes.TrimPrefix(bytes.TrimPrefix(trimmed, []byte("data:")), []byte(" ")))
		default:
			// A comment (": ping"), or an event, id or retry field: none
			// carries the answer.
		}
		if lerr != nil {
			if data.Len() > 0 && errors.Is(lerr, io.EOF) {
				// The last event, without the blank line after it.
				done, err := event(data.Bytes())
				if err != nil {
					return result(), false, err
				}
				if done {
					return result(), true, nil
				}
			}
			if finish != "" {
				// No [DONE]: a server that ends with its finish reason,
				// or holds the stream open after it until the time
				// limit, has still answered whole; only the usage chunk
				// may be missing.
				return result(), true, nil
			}
			if errors.Is(lerr, io.EOF) {
				return result(), false, io.ErrUnexpectedEOF
			}
			return result(), false, lerr
		}
	}
}
