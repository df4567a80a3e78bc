// The stand-in's iframe_api (Tests/e2e/youtube_standin.py): as the real script
// does, it loads the widget script from its own origin, which defines YT and
// calls onYouTubeIframeAPIReady.
(function () {
  const script = document.createElement('script');
  script.src = new URL('/widgetapi.js', document.currentScript.src).href;
  script.async = true;
  document.head.appendChild(script);
}());
