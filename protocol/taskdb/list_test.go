package taskdb_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/google/go-cmp/cmp"

	"github.com/agentry-dev/agentry/protocol/taskdb"
)

func ptr[T any](v T) *T { return &v }

// TestListFilters is a2a-go's in-memory List table test, run with the
// tasks in the database (no state or a finished one) and in memory
// (working).
func TestListFilters(t *testing.T) {
	cutoff := startTime.Add(2 * time.Second)
	early := startTime
	late := startTime.Add(3 * time.Second)
	msgs := func(ids ...string) []*a2a.Message {
		var ms []*a2a.Message
		for _, id := range ids {
			ms = append(ms, &a2a.Message{ID: id, Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart(id)}})
		}
		return ms
	}
	arts := func(name string) []*a2a.Artifact {
		return []*a2a.Artifact{{ID: a2a.ArtifactID(name), Name: name, Parts: a2a.ContentParts{a2a.NewTextPart(name)}}}
	}
	var long []string
	for i := range 120 {
		long = append(long, fmt.Sprint("m", i))
	}
	type task struct {
		ctxID     string
		state     a2a.TaskState
		ts        *time.Time
		history   []*a2a.Message
		artifacts []*a2a.Artifact
	}
	type tc struct {
		name    string
		req     *a2a.ListTasksRequest
		tasks   []task
		want    []int // indexes into tasks
		trim    func(i int, t *a2a.Task)
		wantErr error
	}
	noArtifacts := func(_ int, t *a2a.Task) { t.Artifacts = nil }
	cases := []tc{
		{name: "empty request", req: &a2a.ListTasksRequest{}, tasks: []task{{}, {}, {}}, want: []int{2, 1, 0}},
		{name: "ContextID", req: &a2a.ListTasksRequest{ContextID: "c1"}, tasks: []task{{ctxID: "c1"}, {ctxID: "c2"}, {ctxID: "c1"}}, want: []int{2, 0}},
		{name: "Status", req: &a2a.ListTasksRequest{Status: a2a.TaskStateCanceled},
			tasks: []task{{state: a2a.TaskStateCanceled}, {state: a2a.TaskStateCompleted}, {state: a2a.TaskStateWorking}}, want: []int{0}},
		{name: "Status working", req: &a2a.ListTasksRequest{Status: a2a.TaskStateWorking},
			tasks: []task{{state: a2a.TaskStateCanceled}, {state: a2a.TaskStateWorking}, {state: a2a.TaskStateWorking}}, want: []int{2, 1}},
		{name: "StatusTimestampAfter", req: &a2a.ListTasksRequest{StatusTimestampAfter: &cutoff},
			tasks: []task{{ts: &early}, {}, {ts: &late}, {ts: &cutoff}}, want: []int{3, 2, 1}},
		{name: "HistoryLength 2", req: &a2a.ListTasksRequest{HistoryLength: ptr(2)},
			tasks: []task{{history: msgs("a", "b", "c")}, {history: msgs("d", "e")}}, want: []int{1, 0},
			trim: func(i int, t *a2a.Task) {
				if i == 0 {
					t.History = t.History[1:]
				}
			}},
		{name: "HistoryLength 0", req: &a2a.ListTasksRequest{HistoryLength: ptr(0)},
			tasks: []task{{history: msgs("a", "b")}, {}}, want: []int{1, 0},
			trim: func(_ int, t *a2a.Task) { t.History = []*a2a.Message{} }},
		{name: "HistoryLength negative", req: &a2a.ListTasksRequest{HistoryLength: ptr(-1)},
			tasks: []task{{history: msgs(long...)}}, want: []int{0}},
		{name: "HistoryLength default 100", req: &a2a.ListTasksRequest{},
			tasks: []task{{history: msgs(long...)}}, want: []int{0},
			trim: func(_ int, t *a2a.Task) { t.History = t.History[20:] }},
		{name: "PageSize", req: &a2a.ListTasksRequest{PageSize: 2}, tasks: []task{{}, {}, {}}, want: []int{2, 1}},
		{name: "IncludeArtifacts", req: &a2a.ListTasksRequest{IncludeArtifacts: true},
			tasks: []task{{artifacts: arts("foo")}, {artifacts: arts("bar")}}, want: []int{1, 0}},
		{name: "without artifacts", req: &a2a.ListTasksRequest{},
			tasks: []task{{artifacts: arts("foo")}, {artifacts: arts("bar")}}, want: []int{1, 0}, trim: noArtifacts},
		{name: "PageSize too large", req: &a2a.ListTasksRequest{PageSize: 212}, tasks: []task{{}},
			wantErr: fmt.Errorf("page size must be between 1 and 100 inclusive, got 212: %w", a2a.ErrInvalidRequest)},
		{name: "PageSize negative", req: &a2a.ListTasksRequest{PageSize: -1}, tasks: []task{{}},
			wantErr: fmt.Errorf("page size must be between 1 and 100 inclusive, got -1: %w", a2a.ErrInvalidRequest)},
		{name: "invalid PageToken", req: &a2a.ListTasksRequest{PageToken: "invalidPageToken"}, tasks: []task{{}}, wantErr: a2a.ErrParseError},
		{name: "PageToken without separator", req: &a2a.ListTasksRequest{PageToken: "MTIz"}, tasks: []task{{}}, wantErr: a2a.ErrParseError},
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t, byUser(), taskdb.WithClock(ticking()))
		for _, where := range []string{"database", "memory"} {
			for _, c := range cases {
				t.Run(where+"/"+c.name, func(t *testing.T) {
					// Each case is a user of its own on the one database.
					ctx := as(where + "/" + c.name)
					var created []*a2a.Task
					for _, gt := range c.tasks {
						task := newTask(gt.state)
						if task.Status.State == a2a.TaskStateUnspecified && where == "memory" {
							task.Status.State = a2a.TaskStateWorking
						}
						if gt.ctxID != "" {
							task.ContextID = gt.ctxID
						}
						task.Status.Timestamp = gt.ts
						task.History = gt.history
						task.Artifacts = gt.artifacts
						mustCreate(t, ctx, s, task)
						created = append(created, task)
					}
					got, err := s.List(ctx, c.req)
					if c.wantErr != nil {
						// Page size errors have a2a-go's text; token errors
						// are the same kind.
						sentinel := errors.Unwrap(c.wantErr)
						if sentinel == nil {
							sentinel = c.wantErr
						}
						if !errors.Is(err, sentinel) || (sentinel == a2a.ErrInvalidRequest && err.Error() != c.wantErr.Error()) {
							t.Fatalf("List = %v, want %v", err, c.wantErr)
						}
						return
					}
					if err != nil {
						t.Fatalf("List: %v", err)
					}
					var want []*a2a.Task
					for _, i := range c.want {
						cp := *created[i]
						w := &cp
						if c.trim != nil {
							c.trim(i, w)
						}
						if !c.req.IncludeArtifacts {
							w.Artifacts = nil
						}
						want = append(want, w)
					}
					if diff := cmp.Diff(want, got.Tasks); diff != "" {
						t.Errorf("List tasks (-want +got):\n%s", diff)
					}
				})
			}
		}
	})
}

// TestListPagination walks all pages of a2a-go's pagination cases, with
// the tasks in the database, in memory, and half in each.
func TestListPagination(t *testing.T) {
	cases := []struct {
		name      string
		pageSize  int
		tasks     int
		sameTime  bool
		wantCalls int
	}{
		{name: "incomplete last page", pageSize: 2, tasks: 5, wantCalls: 3},
		{name: "complete last page", pageSize: 2, tasks: 4, wantCalls: 2},
		{name: "page larger than all", pageSize: 10, tasks: 5, wantCalls: 1},
		{name: "default page size", tasks: 51, wantCalls: 2},
		{name: "empty", pageSize: 3, tasks: 0, wantCalls: 1},
		{name: "same update time", pageSize: 2, tasks: 5, sameTime: true, wantCalls: 3},
	}
	forEachBackend(t, func(t *testing.T, b backend) {
		tick := ticking()
		sameTime := false
		clock := func() time.Time {
			if sameTime {
				return startTime
			}
			return tick()
		}
		s := b.open(t, byUser(), taskdb.WithClock(clock))
		for _, where := range []string{"database", "memory", "mixed"} {
			for _, c := range cases {
				t.Run(where+"/"+c.name, func(t *testing.T) {
					ctx := as(where + "/" + c.name)
					sameTime = c.sameTime
					defer func() { sameTime = false }()
					var ids []a2a.TaskID
					for i := range c.tasks {
						st := a2a.TaskStateCompleted
						if where == "memory" || (where == "mixed" && i%2 == 0) {
							st = a2a.TaskStateWorking
						}
						task := newTask(st)
						mustCreate(t, ctx, s, task)
						ids = append(ids, task.ID)
					}
					// Newest first; task ids (UUIDv7) grow with time, so
					// the order is the same with equal update times.
					slices.Reverse(ids)
					var got []a2a.TaskID
					calls, token := 0, ""
					for {
						resp, err := s.List(ctx, &a2a.ListTasksRequest{PageSize: c.pageSize, PageToken: token})
						if err != nil {
							t.Fatalf("List: %v", err)
						}
						calls++
						if resp.TotalSize != c.tasks {
							t.Errorf("TotalSize = %d, want %d", resp.TotalSize, c.tasks)
						}
						if want := max(c.pageSize, 0); want != 0 && resp.PageSize != want {
							t.Errorf("PageSize = %d, want %d", resp.PageSize, want)
						}
						for _, task := range resp.Tasks {
							got = append(got, task.ID)
						}
						if token = resp.NextPageToken; token == "" {
							break
						}
						if calls > c.tasks+1 {
							t.Fatal("List pages without end")
						}
					}
					if diff := cmp.Diff(ids, got); diff != "" {
						t.Errorf("listed tasks (-want +got):\n%s", diff)
					}
					if calls != c.wantCalls {
						t.Errorf("%d calls, want %d", calls, c.wantCalls)
					}
				})
			}
		}
	})
}

// TestListMemoryReplacesRow checks that a running task is listed as in
// memory, not as its stale row: by its state, content and update time.
func TestListMemoryReplacesRow(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		s := b.open(t, byUser(), taskdb.WithClock(ticking()))
		ctx := as("alice")
		x := newTask(a2a.TaskStateSubmitted)
		v := mustCreate(t, ctx, s, x) // row: submitted, time 1
		y := newTask(a2a.TaskStateCompleted)
		mustCreate(t, ctx, s, y) // row: completed, time 2
		x.Status.State = a2a.TaskStateWorking
		v = mustUpdate(t, ctx, s, x, v) // row: working, time 3
		z := newTask(a2a.TaskStateCanceled)
		mustCreate(t, ctx, s, z) // time 4
		x.Metadata = map[string]any{"progress": "memory"}
		mustUpdate(t, ctx, s, x, v) // memory only, time 5

		list, err := s.List(ctx, &a2a.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []a2a.TaskID
		for _, task := range list.Tasks {
			ids = append(ids, task.ID)
		}
		if want := []a2a.TaskID{x.ID, z.ID, y.ID}; !slices.Equal(ids, want) || list.TotalSize != 3 {
			t.Fatalf("List = %v (total %d), want %v", ids, list.TotalSize, want)
		}
		if list.Tasks[0].Metadata["progress"] != "memory" {
			t.Errorf("running task listed as its row: %v", list.Tasks[0].Metadata)
		}
		for _, c := range []struct {
			state a2a.TaskState
			want  []a2a.TaskID
		}{
			{a2a.TaskStateSubmitted, nil},
			{a2a.TaskStateWorking, []a2a.TaskID{x.ID}},
			{a2a.TaskStateCompleted, []a2a.TaskID{y.ID}},
		} {
			list, err := s.List(ctx, &a2a.ListTasksRequest{Status: c.state})
			if err != nil {
				t.Fatal(err)
			}
			var ids []a2a.TaskID
			for _, task := range list.Tasks {
				ids = append(ids, task.ID)
			}
			if !slices.Equal(ids, c.want) || list.TotalSize != len(c.want) {
				t.Errorf("List(%s) = %v (total %d), want %v", c.state, ids, list.TotalSize, c.want)
			}
		}
		// Paging by one crosses from memory to the database and back.
		var paged []a2a.TaskID
		token := ""
		for {
			list, err := s.List(ctx, &a2a.ListTasksRequest{PageSize: 1, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range list.Tasks {
				paged = append(paged, task.ID)
			}
			if token = list.NextPageToken; token == "" {
				break
			}
		}
		if want := []a2a.TaskID{x.ID, z.ID, y.ID}; !slices.Equal(paged, want) {
			t.Errorf("paged List = %v, want %v", paged, want)
		}
	})
}

func TestListUnauthenticated(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		// Without an Authenticator everyone is anonymous, as in a2a-go.
		s := b.open(t)
		mustCreate(t, context.Background(), s, newTask(a2a.TaskStateCompleted))
		if _, err := s.List(context.Background(), &a2a.ListTasksRequest{}); !errors.Is(err, a2a.ErrUnauthenticated) {
			t.Errorf("anonymous List = %v, want ErrUnauthenticated", err)
		}
		failing := b.open(t, taskdb.WithoutRecovery(), taskdb.WithAuthenticator(func(context.Context) (string, error) {
			return "alice", errors.New("token expired")
		}))
		if _, err := failing.List(context.Background(), &a2a.ListTasksRequest{}); !errors.Is(err, a2a.ErrUnauthenticated) {
			t.Errorf("List with failing auth = %v, want ErrUnauthenticated", err)
		}
		if _, err := failing.Create(context.Background(), newTask(a2a.TaskStateWorking)); err == nil {
			t.Error("Create with failing auth succeeded")
		}
		if _, err := failing.Update(context.Background(), &taskstore.UpdateRequest{Task: newTask(a2a.TaskStateWorking)}); err == nil {
			t.Error("Update with failing auth succeeded")
		}
	})
}
