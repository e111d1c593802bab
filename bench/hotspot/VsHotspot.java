// The Java side of `cargo run --release -p stealmark-bench --bin vs_hotspot` (see
// docs/benchmarks.md, "Against HotSpot Parallel GC").
//
// Builds one object graph (seeded, so every JVM builds the same one), keeps
// it reachable from a static field, then obeys one command per line on
// standard input and answers on standard output:
//
//   gc           System.gc() (a full GC with -XX:+UseParallelGC); answers "gc"
//   dump PATH    HotSpotDiagnosticMXBean.dumpHeap(PATH, true): a full GC,
//                then the live objects to an HPROF file; answers "dumped"
//   histo        the GC.class_histogram diagnostic command (a full GC, then
//                live instances per class): "histo-begin", its lines, "histo-end"
//   quit         exits
//
// First line out: "built CLASS COUNT": the graph's main class, as the class
// histogram names it, and how many of its instances the graph keeps
// reachable (computed here, independently of both collectors).
//
// The command loop is serve() and the management beans it needs are looked
// up by initManagement() (called before the graph is built); Corpus.java,
// the real-program workloads, uses both.
//
// Usage: java VsHotspot random|tree|list OBJECTS SEED
import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.util.LinkedList;
import java.util.SplittableRandom;
import javax.management.MBeanServer;
import javax.management.ObjectName;

public class VsHotspot {
    /** A random-graph node: four references, nothing else. */
    static final class Node { Node a, b, c, d; }

    /** A binary-tree node: two children and one long of payload. */
    static final class TreeNode { TreeNode left, right; long value; }

    /** What keeps the graph alive. */
    static Object keep;

    /** Out-degree of the random graph. */
    static final int DEGREE = 4;
    /** Roots of the random graph. */
    static final int RANDOM_ROOTS = 8;
    /** Lists of the list-heavy graph. */
    static final int LISTS = 1024;

    /** The management beans the commands use (see {@link #initManagement}). */
    private static HotSpotDiagnosticMXBean diagnostic;
    private static MBeanServer server;
    private static ObjectName dcmd;

    public static void main(String[] args) throws Exception {
        String graph = args[0];
        int n = Integer.parseInt(args[1]);
        long seed = Long.parseLong(args[2]);
        initManagement();

        String cls;
        long expected;
        switch (graph) {
            case "random": {
                cls = "VsHotspot$Node";
                expected = buildRandom(n, seed);
                break;
            }
            case "tree": {
                cls = "VsHotspot$TreeNode";
                expected = buildTree(n);
                break;
            }
            case "list": {
                cls = "java.util.LinkedList$Node";
                expected = buildLists(n);
                break;
            }
            default:
                throw new IllegalArgumentException("unknown graph " + graph);
        }
        System.out.println("built " + cls + " " + expected);
        System.out.flush();
        serve();
    }

    /**
     * Loads the management classes and looks up the beans that {@link #serve}
     * uses. Call it before the graph is built, so that nothing they allocate
     * lands between the graph's objects.
     */
    static void initManagement() throws Exception {
        if (server != null) return;
        diagnostic = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        server = ManagementFactory.getPlatformMBeanServer();
        dcmd = new ObjectName("com.sun.management:type=DiagnosticCommand");
    }

    /**
     * Obeys the commands on standard input (gc, dump PATH, histo, quit; see
     * the header) until "quit" or the end of the input. Called after the
     * "built" line (also by Corpus.main).
     */
    static void serve() throws Exception {
        initManagement();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals("gc")) {
                System.gc();
                System.out.println("gc");
            } else if (line.startsWith("dump ")) {
                diagnostic.dumpHeap(line.substring(5), true);
                System.out.println("dumped");
            } else if (line.equals("histo")) {
                Object text = server.invoke(dcmd, "gcClassHistogram",
                    new Object[] { new String[0] }, new String[] { String[].class.getName() });
                System.out.println("histo-begin");
                System.out.print(text);
                System.out.println("histo-end");
            } else if (line.equals("quit")) {
                break;
            } else {
                throw new IllegalArgumentException("unknown command " + line);
            }
            System.out.flush();
        }
        System.out.flush();
    }

    /**
     * n nodes allocated in order, each with DEGREE uniformly random targets;
     * RANDOM_ROOTS random nodes are kept. Returns how many nodes the roots
     * reach (a breadth-first search over the edge table, before the nodes
     * exist).
     */
    static long buildRandom(int n, long seed) {
        SplittableRandom rng = new SplittableRandom(seed);
        int[] edges = new int[n * DEGREE];
        for (int i = 0; i < edges.length; i++) edges[i] = rng.nextInt(n);
        int[] rootIdx = new int[RANDOM_ROOTS];
        for (int i = 0; i < RANDOM_ROOTS; i++) rootIdx[i] = rng.nextInt(n);

        boolean[] seen = new boolean[n];
        int[] queue = new int[n];
        int head = 0, tail = 0;
        for (int r : rootIdx) if (!seen[r]) { seen[r] = true; queue[tail++] = r; }
        while (head < tail) {
            int v = queue[head++];
            for (int k = 0; k < DEGREE; k++) {
                int w = edges[v * DEGREE + k];
                if (!seen[w]) { seen[w] = true; queue[tail++] = w; }
            }
        }
        queue = null;
        seen = null;

        Node[] nodes = new Node[n];
        for (int i = 0; i < n; i++) nodes[i] = new Node();
        for (int i = 0; i < n; i++) {
            Node x = nodes[i];
            int e = i * DEGREE;
            x.a = nodes[edges[e]];
            x.b = nodes[edges[e + 1]];
            x.c = nodes[edges[e + 2]];
            x.d = nodes[edges[e + 3]];
        }
        Node[] roots = new Node[RANDOM_ROOTS];
        for (int i = 0; i < RANDOM_ROOTS; i++) roots[i] = nodes[rootIdx[i]];
        keep = roots;
        return tail;
    }

    /** A complete binary tree of n nodes, allocated breadth-first. */
    static long buildTree(int n) {
        TreeNode[] nodes = new TreeNode[n];
        for (int i = 0; i < n; i++) {
            nodes[i] = new TreeNode();
            nodes[i].value = i;
        }
        for (int i = 0; i < n; i++) {
            if (2L * i + 1 < n) nodes[i].left = nodes[2 * i + 1];
            if (2L * i + 2 < n) nodes[i].right = nodes[2 * i + 2];
        }
        keep = nodes[0];
        return n;
    }

    /**
     * LISTS java.util.LinkedLists (doubly linked) of n/2 boxed Longs in all,
     * appended round-robin, so that consecutive nodes of one list lie far
     * apart in the heap: n/2 list nodes plus n/2 Longs.
     */
    @SuppressWarnings("unchecked")
    static long buildLists(int n) {
        LinkedList<Long>[] lists = new LinkedList[LISTS];
        for (int i = 0; i < LISTS; i++) lists[i] = new LinkedList<>();
        int elements = n / 2;
        for (int i = 0; i < elements; i++) {
            // Outside the Long cache (-128..127): a fresh object each time.
            lists[i % LISTS].add(Long.valueOf(1_000_000L + i));
        }
        keep = lists;
        return elements;
    }
}
