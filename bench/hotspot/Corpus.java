// Real-program workloads for the HotSpot comparison: each one runs a real
// piece of Java work, keeps its working set reachable from static fields,
// prints "built WORKLOAD COUNT" and then obeys the commands of
// VsHotspot.serve() (gc, dump PATH, histo, quit; see VsHotspot.java), so
// that the same harness measures HotSpot's Parallel GC marking on it and
// dumps its live heap for stealmark.
//
//   javac    the JDK's own compiler (JavacTask, in-process) parses and
//            attributes (analyze(): enter, attribute, flow; no code
//            generation) the whole of three modules' own sources: java.base,
//            java.compiler and jdk.compiler, one task each (javac compiles
//            one patched module at a time), against the running JDK's image
//            (--patch-module MODULE=DIR). The sources are extracted once from
//            src.zip into DATA_DIR/jdk-FEATURE/MODULE/ and reused. The tasks
//            (and with them javac's whole contexts: symbol tables, types,
//            scopes, attribution environments, the sources' text), the
//            compilation-unit trees and the analyzed elements stay reachable.
//            About 8 (JDK 17) to 9 (JDK 25) million live objects, 40-60 s.
//            COUNT: compilation units analyzed.
//   strings  a text index over java.base's sources (read from src.zip in
//            name order): every file's lines, each distinct line one shared
//            String (a HashMap line table), a HashMap of each distinct word
//            to its postings (file, line), a HashMap of adjacent word pairs
//            ("a b") to counts and a word-count HashMap per file: mostly
//            HashMap nodes, Strings and their byte[]s. About 6-7 million
//            live objects, 5 s. COUNT: distinct words.
//   caches   a caching layer driven by a seeded stream of requests: a
//            WeakHashMap<Key, Metadata> keyed by sessions' keys (a session
//            that ends removes its entry; at the end a third of the sessions
//            are abandoned without that, and the first GC clears their keys:
//            their entries and Metadata stay until the map is next touched,
//            which the command loop never does), an access-ordered
//            LinkedHashMap (LRU) and a ConcurrentHashMap of
//            SoftReference<Document>, each Document a sizable object graph
//            that only the soft reference holds, and strongly held orders and
//            customers. Without memory pressure (System.gc() in a mostly
//            empty heap) HotSpot keeps the soft referents. COUNT: the Key
//            instances that survive a GC (the class histogram's count of
//            Corpus$Key); the Documents the soft caches hold are written to
//            standard error. About 6 million live objects, 4 s.
//
// The inputs are read in a fixed order and all randomness is seeded, so every
// run builds the same working set. The management classes are loaded before
// anything is built (VsHotspot.initManagement()). Diagnostics go to standard
// error; standard output carries only the "built" line and the answers to the
// commands.
//
// src.zip is ${java.home}/lib/src.zip; where the JDK lacks it (some
// distributions ship it in a separate package), DATA_DIR/src-FEATURE.zip
// (e.g. src-17.zip) is read instead. The javac workload compiles it against
// the running JDK's image, so the sources should be of the same feature
// release (an update's differences show as a few errors, counted on standard
// error and tolerated).
//
// Usage: java -cp CLASSES Corpus javac|strings|caches DATA_DIR
//        (compile VsHotspot.java and Corpus.java together; -Xmx3g is enough)
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.SoftReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import javax.lang.model.element.Element;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticListener;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.util.JavacTask;

public class Corpus {
    /** What keeps the working set alive. */
    static Object keep;

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: java -cp CLASSES Corpus javac|strings|caches DATA_DIR");
            System.exit(2);
        }
        String workload = args[0];
        Path dataDir = Paths.get(args[1]);
        VsHotspot.initManagement();

        long start = System.nanoTime();
        long count;
        switch (workload) {
            case "javac": count = buildJavac(dataDir); break;
            case "strings": count = buildStrings(dataDir); break;
            case "caches": count = buildCaches(); break;
            default: throw new IllegalArgumentException("unknown workload " + workload);
        }
        System.err.printf(Locale.ROOT, "corpus: %s built in %.1f s%n",
            workload, (System.nanoTime() - start) / 1e9);
        System.out.println("built " + workload + " " + count);
        System.out.flush();
        VsHotspot.serve();
    }

    // ---------------------------------------------------------------- inputs

    static int feature() {
        return Runtime.version().feature();
    }

    /** The running JDK's src.zip, else DATA_DIR/src-FEATURE.zip. */
    static Path srcZip(Path dataDir) throws IOException {
        Path own = Paths.get(System.getProperty("java.home"), "lib", "src.zip");
        if (Files.isReadable(own)) return own;
        Path fallback = dataDir.resolve("src-" + feature() + ".zip");
        if (Files.isReadable(fallback)) return fallback;
        throw new IOException("no src.zip: neither " + own + " nor " + fallback
            + " is readable (install the JDK's sources, or put its src.zip at the latter)");
    }

    /** The .java entries of src.zip under any of the prefixes, in name order. */
    static List<String> javaEntries(ZipFile zip, String[] prefixes) {
        List<String> names = new ArrayList<>();
        for (ZipEntry e : Collections.list(zip.entries())) {
            String n = e.getName();
            if (e.isDirectory() || !n.endsWith(".java")) continue;
            for (String p : prefixes) {
                if (n.startsWith(p)) { names.add(n); break; }
            }
        }
        Collections.sort(names);
        return names;
    }

    // ----------------------------------------------------------------- javac

    /**
     * The modules whose sources the javac workload compiles, one JavacTask
     * each (javac patches one module per compilation), in this order.
     * module-info.java is left out: the sources patch the image's modules.
     */
    static final String[] JAVAC_MODULES = { "java.base", "java.compiler", "jdk.compiler" };

    /** The compilers and what they produced, kept reachable. */
    static final List<JavacTask> javacTasks = new ArrayList<>();
    static final List<CompilationUnitTree> javacUnits = new ArrayList<>();
    static final List<Element> javacElements = new ArrayList<>();

    static long buildJavac(Path dataDir) throws Exception {
        Path root = extractJavac(dataDir);
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        for (String module : JAVAC_MODULES) {
            long start = System.nanoTime();
            Path dir = root.resolve(module);
            List<File> files = new ArrayList<>();
            try (var walk = Files.walk(dir)) {
                walk.filter(p -> p.toString().endsWith(".java")).sorted()
                    .forEach(p -> files.add(p.toFile()));
            }
            int[] diagnostics = new int[Diagnostic.Kind.values().length];
            List<String> firstErrors = new ArrayList<>();
            DiagnosticListener<JavaFileObject> listener = d -> {
                diagnostics[d.getKind().ordinal()]++;
                if (d.getKind() == Diagnostic.Kind.ERROR && firstErrors.size() < 10) {
                    firstErrors.add(d.toString());
                }
            };
            StandardJavaFileManager fm =
                compiler.getStandardFileManager(listener, Locale.ROOT, StandardCharsets.UTF_8);
            List<String> options = List.of(
                "--patch-module", module + "=" + dir,
                "-proc:none", "-implicit:none", "-nowarn", "-Xlint:none",
                "-XDsuppressNotes", "-Xmaxerrs", "100000", "-encoding", "UTF-8");
            JavacTask task = (JavacTask) compiler.getTask(null, fm, listener, options, null,
                fm.getJavaFileObjectsFromFiles(files));
            int units = 0, elements = 0;
            for (CompilationUnitTree u : task.parse()) { javacUnits.add(u); units++; }
            for (Element e : task.analyze()) { javacElements.add(e); elements++; }
            javacTasks.add(task);
            System.err.printf(Locale.ROOT, "corpus: javac %s: %d files, %d units, %d elements;"
                    + " %d errors, %d warnings; %.1f s%n",
                module, files.size(), units, elements,
                diagnostics[Diagnostic.Kind.ERROR.ordinal()],
                diagnostics[Diagnostic.Kind.WARNING.ordinal()]
                    + diagnostics[Diagnostic.Kind.MANDATORY_WARNING.ordinal()],
                (System.nanoTime() - start) / 1e9);
            for (String e : firstErrors) System.err.println("corpus: javac: " + e);
        }
        keep = javacTasks;
        return javacUnits.size();
    }

    /**
     * Extracts the JAVAC_MODULES sources into DATA_DIR/jdk-FEATURE/MODULE
     * (once: a marker file records what was extracted) and returns
     * DATA_DIR/jdk-FEATURE.
     */
    static Path extractJavac(Path dataDir) throws IOException {
        Path root = dataDir.resolve("jdk-" + feature());
        Path marker = root.resolve(".extracted");
        Path zipPath = srcZip(dataDir);
        String want = zipPath + " " + Files.size(zipPath) + "\n"
            + String.join("\n", JAVAC_MODULES) + "\n";
        if (Files.isRegularFile(marker)
                && Files.readString(marker, StandardCharsets.UTF_8).equals(want)) {
            return root;
        }
        System.err.println("corpus: extracting sources from " + zipPath + " to " + root);
        if (Files.exists(root)) deleteTree(root);
        Files.createDirectories(root);
        String[] prefixes = new String[JAVAC_MODULES.length];
        for (int i = 0; i < prefixes.length; i++) prefixes[i] = JAVAC_MODULES[i] + "/";
        try (ZipFile zip = new ZipFile(zipPath.toFile())) {
            for (String name : javaEntries(zip, prefixes)) {
                if (name.endsWith("/module-info.java")) continue;
                Path out = root.resolve(name);
                Files.createDirectories(out.getParent());
                try (InputStream in = zip.getInputStream(zip.getEntry(name))) {
                    Files.copy(in, out, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
        Files.writeString(marker, want, StandardCharsets.UTF_8);
        return root;
    }

    static void deleteTree(Path root) throws IOException {
        try (var walk = Files.walk(root)) {
            List<Path> paths = new ArrayList<>();
            walk.forEach(paths::add);
            Collections.reverse(paths);
            for (Path p : paths) Files.delete(p);
        }
    }

    // --------------------------------------------------------------- strings

    /** The modules whose sources the strings workload indexes. */
    static final String[] STRINGS_MODULES = { "java.base/" };

    /** One source file: its name, its lines and how often each word occurs in it. */
    static final class SourceFile {
        final String name;
        final String[] lines;
        final HashMap<String, Integer> wordCounts = new HashMap<>();
        SourceFile(String name, String[] lines) { this.name = name; this.lines = lines; }
    }

    /** Where a word occurs: pairs (file, line), in order. */
    static final class Postings {
        final String word;
        int[] at = new int[4];
        int size;
        Postings(String word) { this.word = word; }
        void add(int file, int line) {
            if (size + 2 > at.length) at = Arrays.copyOf(at, at.length * 2);
            at[size++] = file;
            at[size++] = line;
        }
    }

    static final List<SourceFile> files = new ArrayList<>();
    /** Each distinct line, the one String all files share for it. */
    static final HashMap<String, String> lineTable = new HashMap<>();
    /** Each distinct word (an identifier or number), to where it occurs. */
    static final HashMap<String, Postings> wordIndex = new HashMap<>();
    /** Each pair of words adjacent on a line ("a b"), to how often it occurs. */
    static final HashMap<String, Integer> pairCounts = new HashMap<>();

    static long buildStrings(Path dataDir) throws Exception {
        long lines = 0, words = 0;
        try (ZipFile zip = new ZipFile(srcZip(dataDir).toFile())) {
            for (String name : javaEntries(zip, STRINGS_MODULES)) {
                String text;
                try (InputStream in = zip.getInputStream(zip.getEntry(name))) {
                    text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
                int fileNo = files.size();
                List<String> fileLines = new ArrayList<>();
                for (int from = 0; from < text.length(); ) {
                    int nl = text.indexOf('\n', from);
                    int end = nl < 0 ? text.length() : nl;
                    int cut = end > from && text.charAt(end - 1) == '\r' ? end - 1 : end;
                    String line = text.substring(from, cut);
                    String shared = lineTable.putIfAbsent(line, line);
                    fileLines.add(shared != null ? shared : line);
                    from = end + 1;
                }
                SourceFile file = new SourceFile(name, fileLines.toArray(new String[0]));
                files.add(file);
                for (int ln = 0; ln < file.lines.length; ln++) {
                    words += indexLine(file, fileNo, ln, file.lines[ln]);
                }
                lines += file.lines.length;
            }
        }
        keep = files;
        System.err.printf(Locale.ROOT, "corpus: strings %d files, %d lines (%d distinct),"
                + " %d words (%d distinct), %d distinct pairs%n",
            files.size(), lines, lineTable.size(), words, wordIndex.size(), pairCounts.size());
        return wordIndex.size();
    }

    /** Indexes the words of one line; returns how many it has. */
    static int indexLine(SourceFile file, int fileNo, int lineNo, String line) {
        int n = 0;
        String prev = null;
        int len = line.length();
        for (int i = 0; i < len; ) {
            char c = line.charAt(i);
            if (!Character.isJavaIdentifierPart(c) || c == '\u0000') { i++; continue; }
            int j = i + 1;
            while (j < len && Character.isJavaIdentifierPart(line.charAt(j))) j++;
            String w = line.substring(i, j);
            Postings p = wordIndex.get(w);
            if (p == null) {
                p = new Postings(w);
                wordIndex.put(w, p);
            }
            String word = p.word;
            p.add(fileNo, lineNo);
            file.wordCounts.merge(word, 1, Integer::sum);
            if (prev != null) pairCounts.merge(prev + " " + word, 1, Integer::sum);
            prev = word;
            n++;
            i = j;
        }
        return n;
    }

    // ---------------------------------------------------------------- caches

    /** A weak-cache key: value-based equality, as a real key class has. */
    static final class Key {
        final String name;
        final int id;
        Key(String name, int id) { this.name = name; this.id = id; }
        @Override public boolean equals(Object o) {
            return o instanceof Key && ((Key) o).id == id && ((Key) o).name.equals(name);
        }
        @Override public int hashCode() { return name.hashCode() * 31 + id; }
    }

    /** What the weak cache associates with a key (it must not reach the key). */
    static final class Metadata {
        final String label;
        final long created;
        final int[] stats;
        final ArrayList<String> tags;
        Metadata(String label, long created, int[] stats, ArrayList<String> tags) {
            this.label = label; this.created = created; this.stats = stats; this.tags = tags;
        }
    }

    /** A user's session: the only strong holder of its Key. */
    static final class Session {
        final Key key;
        final String user;
        final ArrayList<Order> recent = new ArrayList<>();
        Session(Key key, String user) { this.key = key; this.user = user; }
    }

    static final class Customer {
        final String id;
        final String name;
        final String address;
        Customer(String id, String name, String address) {
            this.id = id; this.name = name; this.address = address;
        }
    }

    static final class Order {
        final long id;
        final Customer customer;
        final String sku;
        final int quantity;
        Order(long id, Customer customer, String sku, int quantity) {
            this.id = id; this.customer = customer; this.sku = sku; this.quantity = quantity;
        }
    }

    /** A softly cached value: a parsed document, a sizable graph of its own. */
    static final class Document {
        final String id;
        final HashMap<String, String> headers = new HashMap<>();
        final ArrayList<Section> sections = new ArrayList<>();
        Document(String id) { this.id = id; }
    }

    static final class Section {
        final String title;
        final String body;
        final int[] offsets;
        Section(String title, String body, int[] offsets) {
            this.title = title; this.body = body; this.offsets = offsets;
        }
    }

    /** An LRU map of soft references. */
    static final class SoftLru<K, V> extends LinkedHashMap<K, SoftReference<V>> {
        private static final long serialVersionUID = 1L;
        final int capacity;
        SoftLru(int capacity) { super(16, 0.75f, true); this.capacity = capacity; }
        @Override protected boolean removeEldestEntry(Map.Entry<K, SoftReference<V>> eldest) {
            return size() > capacity;
        }
    }

    static final int REQUESTS = 1_200_000;
    static final int LRU_CAPACITY = 16_384;
    static final int DOCUMENT_IDS = 60_000;
    static final int BLOB_IDS = 12_000;
    static final int CUSTOMERS = 20_000;
    static final int MAX_SESSIONS = 150_000;
    static final String[] TAGS = new String[64];
    static {
        for (int i = 0; i < TAGS.length; i++) TAGS[i] = "tag-" + i;
    }

    static final WeakHashMap<Key, Metadata> metadata = new WeakHashMap<>();
    static final SoftLru<String, Document> documents = new SoftLru<>(LRU_CAPACITY);
    static final ConcurrentHashMap<Long, SoftReference<Document>> blobs = new ConcurrentHashMap<>();
    static final ArrayList<Session> sessions = new ArrayList<>();
    static final HashMap<String, Customer> customers = new HashMap<>();
    static final ArrayList<Order> orders = new ArrayList<>();

    static long buildCaches() {
        SplittableRandom rng = new SplittableRandom(0x5eed_cace_5L);
        Customer[] customerById = new Customer[CUSTOMERS];
        for (int i = 0; i < CUSTOMERS; i++) {
            Customer c = new Customer("C" + i, "customer " + randomWord(rng, 10),
                rng.nextInt(1, 10_000) + " " + randomWord(rng, 8) + " street");
            customerById[i] = c;
            customers.put(c.id, c);
        }
        int nextKey = 0;
        long nextOrder = 0;
        int hits = 0, misses = 0;
        for (int r = 0; r < REQUESTS; r++) {
            int kind = rng.nextInt(100);
            if (kind < 30) {
                // A document request through the LRU of soft references.
                String id = "doc/" + zipf(rng, DOCUMENT_IDS);
                SoftReference<Document> ref = documents.get(id);
                Document d = ref == null ? null : ref.get();
                if (d == null) {
                    misses++;
                    documents.put(id, new SoftReference<>(makeDocument(rng, id)));
                } else {
                    hits++;
                }
            } else if (kind < 40) {
                // A blob request through the concurrent map of soft references.
                long id = zipf(rng, BLOB_IDS);
                SoftReference<Document> ref = blobs.get(id);
                if (ref == null || ref.get() == null) {
                    blobs.put(id, new SoftReference<>(makeDocument(rng, "blob/" + id)));
                }
            } else if (kind < 60 || sessions.isEmpty()) {
                // A new session, with its metadata in the weak map.
                Key key = new Key("session-" + randomWord(rng, 12), nextKey++);
                ArrayList<String> tags = new ArrayList<>();
                int t = rng.nextInt(1, 5);
                for (int i = 0; i < t; i++) tags.add(TAGS[rng.nextInt(TAGS.length)]);
                int[] stats = new int[rng.nextInt(4, 16)];
                for (int i = 0; i < stats.length; i++) stats[i] = rng.nextInt();
                metadata.put(key, new Metadata("meta " + key.name, r, stats, tags));
                Session s = new Session(key, "user" + rng.nextInt(CUSTOMERS));
                if (sessions.size() < MAX_SESSIONS) {
                    sessions.add(s);
                } else {
                    // Full: the new session takes the place of one that ends.
                    metadata.remove(sessions.set(rng.nextInt(sessions.size()), s).key);
                }
            } else if (kind < 70) {
                // A session ends and logs out: its metadata is removed.
                int i = rng.nextInt(sessions.size());
                Session last = sessions.remove(sessions.size() - 1);
                Session ended = i < sessions.size() ? sessions.set(i, last) : last;
                metadata.remove(ended.key);
            } else {
                // An order, kept for good, and in its session's recent list.
                Customer c = customerById[zipf(rng, CUSTOMERS)];
                Order o = new Order(nextOrder++, c, "SKU-" + rng.nextInt(100_000),
                    rng.nextInt(1, 20));
                orders.add(o);
                Session s = sessions.get(rng.nextInt(sessions.size()));
                s.recent.add(o);
                if (s.recent.size() > 8) s.recent.remove(0);
            }
        }
        int softDocs = 0;
        for (SoftReference<Document> ref : documents.values()) if (ref.get() != null) softDocs++;
        for (SoftReference<Document> ref : blobs.values()) if (ref.get() != null) softDocs++;
        int entries = metadata.size();
        // Last, a third of the sessions are abandoned without logging out:
        // their keys are left to the weak map alone. Nothing touches the map
        // after this, so however the collections before it fell, every one of
        // those keys is still there, and the first GC clears them all.
        ArrayList<Session> kept = new ArrayList<>();
        int abandoned = 0;
        for (Session s : sessions) {
            if (rng.nextInt(3) == 0) abandoned++; else kept.add(s);
        }
        sessions.clear();
        sessions.addAll(kept);
        kept = null;
        keep = sessions;
        System.err.printf(Locale.ROOT, "corpus: caches %d requests (LRU %d hits, %d misses):"
                + " %d weak-map entries, %d of them with keys held strongly (Corpus$Key,"
                + " by sessions), %d only weakly; %d documents softly held (Corpus$Document),"
                + " %d orders, %d customers%n",
            REQUESTS, hits, misses, entries, sessions.size(), abandoned, softDocs,
            orders.size(), customers.size());
        return sessions.size();
    }

    /** A document of 4 to 19 sections and 8 headers, all fresh strings. */
    static Document makeDocument(SplittableRandom rng, String id) {
        Document d = new Document(id);
        for (int i = 0; i < 8; i++) {
            d.headers.put("h" + i + "-" + randomWord(rng, 4), randomWord(rng, rng.nextInt(4, 24)));
        }
        int n = rng.nextInt(4, 20);
        for (int i = 0; i < n; i++) {
            int[] offsets = new int[rng.nextInt(2, 10)];
            for (int k = 0; k < offsets.length; k++) offsets[k] = rng.nextInt(1 << 20);
            d.sections.add(new Section(randomWord(rng, rng.nextInt(6, 20)),
                randomWord(rng, rng.nextInt(20, 200)), offsets));
        }
        return d;
    }

    static String randomWord(SplittableRandom rng, int length) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) b[i] = (byte) ('a' + rng.nextInt(26));
        return new String(b, StandardCharsets.ISO_8859_1);
    }

    /** A skewed choice in [0, n): small values much more often (a power law). */
    static int zipf(SplittableRandom rng, int n) {
        // StrictMath: the same result on every JDK, interpreted or compiled.
        int v = (int) StrictMath.floor(StrictMath.pow(n, rng.nextDouble())) - 1;
        return Math.max(0, Math.min(n - 1, v));
    }
}
