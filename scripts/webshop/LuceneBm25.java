// Reference for the WebShop search (src/envs/webshop/search/bm25.ts): Lucene itself, with the analyzer and query of the
// original's pyserini index (Anserini's default English analyzer, BM25 with k1 = 0.9 and b = 0.4, a bag-of-words
// query boosted by term counts, ties broken by the document id). Run with Debian's liblucene8-java:
//   javac -cp "/usr/share/java/*" -d /tmp/lucene-ref scripts/webshop/LuceneBm25.java   (bench/webshop-search-agreement.ts does this)
//   java -cp "/tmp/lucene-ref:/usr/share/java/*" LuceneBm25 analyze < lines.txt          one line of terms per input line
//   java -cp "/tmp/lucene-ref:/usr/share/java/*" LuceneBm25 search docs.tsv queries.txt  top 50 "id:score" per query
// docs.tsv: one document per line, `id<TAB>contents` (contents with \n, \t and \\ escaped as in JSON).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.LowerCaseFilter;
import org.apache.lucene.analysis.StopFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.Tokenizer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.en.EnglishPossessiveFilter;
import org.apache.lucene.analysis.en.PorterStemFilter;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.SortedDocValuesField;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.FieldDoc;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopFieldDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.util.BytesRef;

public class LuceneBm25 {
  static Analyzer analyzer() {
    return new Analyzer() {
      @Override
      protected TokenStreamComponents createComponents(String field) {
        Tokenizer source = new StandardTokenizer();
        TokenStream result = new EnglishPossessiveFilter(source);
        result = new LowerCaseFilter(result);
        result = new StopFilter(result, EnglishAnalyzer.ENGLISH_STOP_WORDS_SET);
        result = new PorterStemFilter(result);
        return new TokenStreamComponents(source, result);
      }
    };
  }

  static List<String> terms(Analyzer analyzer, String text) throws Exception {
    List<String> out = new ArrayList<>();
    try (TokenStream ts = analyzer.tokenStream("contents", text)) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) out.add(term.toString());
      ts.end();
    }
    return out;
  }

  static String unescape(String s) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        char n = s.charAt(++i);
        b.append(n == 'n' ? '\n' : n == 't' ? '\t' : n);
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }

  public static void main(String[] args) throws Exception {
    Analyzer analyzer = analyzer();
    if (args[0].equals("analyze")) {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = in.readLine()) != null; ) System.out.println(String.join(" ", terms(analyzer, unescape(line))));
      System.out.flush();
      return;
    }
    ByteBuffersDirectory dir = new ByteBuffersDirectory();
    IndexWriterConfig config = new IndexWriterConfig(analyzer);
    config.setSimilarity(new BM25Similarity(0.9f, 0.4f));
    try (IndexWriter writer = new IndexWriter(dir, config)) {
      for (String line : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
        int tab = line.indexOf('\t');
        String id = line.substring(0, tab);
        Document doc = new Document();
        doc.add(new StringField("id", id, Field.Store.YES));
        doc.add(new SortedDocValuesField("id", new BytesRef(id)));
        doc.add(new TextField("contents", unescape(line.substring(tab + 1)), Field.Store.NO));
        writer.addDocument(doc);
      }
    }
    IndexSearcher searcher = new IndexSearcher(DirectoryReader.open(dir));
    searcher.setSimilarity(new BM25Similarity(0.9f, 0.4f));
    Sort sort = new Sort(SortField.FIELD_SCORE, new SortField("id", SortField.Type.STRING_VAL));
    for (String q : Files.readAllLines(Paths.get(args[2]), StandardCharsets.UTF_8)) {
      Map<String, Integer> counts = new LinkedHashMap<>();
      for (String t : terms(analyzer, q)) counts.merge(t, 1, Integer::sum);
      BooleanQuery.Builder builder = new BooleanQuery.Builder();
      for (Map.Entry<String, Integer> e : counts.entrySet()) {
        builder.add(new BoostQuery(new TermQuery(new Term("contents", e.getKey())), (float) e.getValue()), BooleanClause.Occur.SHOULD);
      }
      Query query = builder.build();
      StringBuilder line = new StringBuilder();
      if (!counts.isEmpty()) {
        TopFieldDocs top = searcher.search(query, 50, sort, true);
        for (ScoreDoc hit : top.scoreDocs) {
          if (line.length() > 0) line.append(' ');
          line.append(searcher.doc(hit.doc).get("id")).append(':').append(Float.toString(((FieldDoc) hit).score));
        }
      }
      System.out.println(line);
    }
  }
}
